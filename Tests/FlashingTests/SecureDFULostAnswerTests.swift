import FirmwareImage
import LinkModel
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Testing

@testable import Flashing

/// The Secure DFU bootloader resets 100 ms after its answer to the last Execute; on a radio
/// shared with other boards that answer can still be waiting when the board resets, and is
/// lost. The flow connects again and finds the new application running: the board has
/// already restarted, so the read-back starts at once instead of waiting for a restart.
@Suite struct SecureDFULostAnswerTests {
    static func flash(dropping drop: Set<Int>) throws -> SimulatedFlashRun {
        var faults = FaultPlan.none
        faults.dropNotificationAt = drop
        var sim = Simulation(link: .deviceRequested, faults: faults)
        let running = SessionStoryTests.firmware(.nrf52833, .r1, .heart)
        let id = sim.addBoard(try NordicStoryTests.stockBoard(.microbitV2, running: running))
        var options = FlashOptions(mode: .full)
        options.fullPath = .nordic
        return try NordicStoryTests.run(
            SessionStoryTests.firmware(.nrf52833, .r2, .heart), on: id, board: .microbitV2, in: &sim,
            options: options)
    }

    @Test func aLostAnswerToTheLastExecuteIsReadBackWithoutWaitingForARestart() throws {
        let clean = try Self.flash(dropping: [])
        #expect(clean.result.error == nil && clean.result.verified)
        // The index of the last Execute's answer among the flow's notifications.
        let notifications = clean.trace.entries.filter { $0.kind == .notification }
        let last = try #require(notifications.lastIndex { $0.text == "600401" })

        let lost = try Self.flash(dropping: [last])
        #expect(lost.statistics.faults.droppedNotifications == 1)
        #expect(lost.result.error == nil, "\(lost.result.error ?? "")")
        #expect(lost.result.path == .full)
        #expect(lost.result.verified)
        // A reconnection (its delay and setup) more than the clean flash; not the 10 s the
        // read-back waits for a restart that already happened.
        #expect(lost.result.seconds > clean.result.seconds)
        #expect(lost.result.seconds < clean.result.seconds + 3)
    }
}
