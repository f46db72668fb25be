import FirmwareImage
import LinkModel
import SampleFirmware
import SimulatedFlashing
import Testing
import TestSupport
import Transport
@testable import Flashing
@testable import SimulatedBoard

/// A board found in its Nordic bootloader ("DfuTarg") by the read-back after a full update is
/// recovered as at the start of a session (a Nordic DFU on that link), then read back again.
@Suite struct DfuTargAtReadBackTests {
    /// Test fixture, not a firmware behaviour: at its `at`-th reset the board stays in its
    /// Nordic bootloader with its application intact, as the board the read-back finds there.
    struct StaysInBootloader: SimulatedService {
        let uuid = BLEUUID("0000feed-0000-1000-8000-00805f9b34fb")
        let characteristics: Set<GATTCharacteristic> = []
        let at: Int
        var resets = 0

        mutating func didWrite(
            _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
            device: inout DeviceState, effects: inout ServiceEffects
        ) {}
        mutating func workDone(tag: Int, device: inout DeviceState, effects: inout ServiceEffects) {}
        mutating func didBoot(device: DeviceState) {}
        func isOffered(device: DeviceState) -> Bool { false }

        mutating func runBootloader(device: inout DeviceState) {
            resets += 1
            if resets == at { device.nordic.bootloaderActive = true }
        }
    }

    @Test func aBoardInDfuTargAtTheReadBackIsRecoveredAndVerified() throws {
        let old = SessionStoryTests.firmware(.nrf52833, .r1, .heart)
        let file = SessionStoryTests.firmware(.nrf52833, .r2, .heart)
        var board = try NordicStoryTests.stockBoard(.microbitV2, running: old)
        // Reset 1 enters the bootloader (buttonless DFU), reset 2 activates the new application:
        // the board stays in the bootloader there.
        board.addService(StaysInBootloader(at: 2))
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(board)
        let plan = try FlashPlan.make(firmware: file, board: .microbitV2)
        let run = SimulatedFlash.run(plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        let outcome = try run.outcome.get()
        #expect(outcome.path == .full)
        #expect(outcome.verified, "\(outcome.unverifiedReason ?? "")")
        #expect(run.trace.entries.contains { $0.text.contains("read-back found the board in its Nordic bootloader") })
        let after = try sim.board(id)
        #expect(!after.inNordicBootloader && after.mode == .application)
        try NordicStoryTests.expectApplication(of: after, equals: file)
    }
}
