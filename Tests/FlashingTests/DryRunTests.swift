import FirmwareImage
import LinkModel
import PartialFlashing
import PartialFlashingFrames
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Testing
@testable import Flashing

/// A dry run decides and writes nothing, and leaves the board as it found it: reading the memory
/// map changes nothing, and the restart into pairing mode comes only with a decision to write.
@Suite struct DryRunTests {
    static func dryRun(_ target: Firmware, onBoardIn mode: BoardMode) throws -> (
        SessionOutcome, before: SimulatedBoard, after: SimulatedBoard, run: SimulatedFlashRun
    ) {
        var options = FlashOptions()
        options.dryRun = true
        var sim = Simulation(link: .deviceRequested)
        let running = SessionStoryTests.firmware(.nrf52833, .r1, .heart)
        let id = sim.addBoard(
            try SimulatedBoard(
                profile: SimulatedBoard.stockProfile(.microbitV2),
                image: running.sections[0].image, mode: mode))
        let before = try sim.board(id)
        let run = SimulatedFlash.run(
            plan: try .make(firmware: target, board: .microbitV2), options: options,
            on: id, named: "sim", in: &sim)
        return (try run.outcome.get(), before, try sim.board(id), run)
    }

    @Test(arguments: [
        (SampleFirmware.RuntimeID.r1, SampleFirmware.ProgramID.counter, FlashPath.partial),
        (.r2, .heart, .full), (.r1, .heart, .upToDate)
    ])
    func aBoardRunningItsProgramIsNeverRestartedByADryRun(
        runtime: SampleFirmware.RuntimeID, program: SampleFirmware.ProgramID,
        path: FlashPath
    ) throws {
        let (o, before, after, run) = try Self.dryRun(
            SessionStoryTests.firmware(.nrf52833, runtime, program), onBoardIn: .application)
        #expect(o.dryRun && o.path == path)
        #expect(after.flash == before.flash && after.flash.eraseCount == 0 && after.flash.wordWriteCount == 0)
        #expect(
            after.mode == .application && after.device.bootCount == before.device.bootCount,
            "the dry run left the board in \(after.mode)")
        #expect(!run.trace.entries.contains { $0.kind == .reboot })
        let restarts = run.trace.entries.filter { e in
            e.kind == .write && ["ff00", "ff01"].contains { e.text.lowercased().hasSuffix(" " + $0) }
        }
        #expect(restarts.isEmpty, "\(restarts)")
    }

    @Test func aBoardFoundInPairingModeStaysThere() throws {
        let (o, _, after, run) = try Self.dryRun(
            SessionStoryTests.firmware(.nrf52833, .r1, .counter), onBoardIn: .pairing)
        #expect(o.dryRun && o.path == .partial)
        #expect(after.mode == .pairing)
        #expect(!run.trace.entries.contains { $0.text.contains("restarting it into its program") })
    }
}
