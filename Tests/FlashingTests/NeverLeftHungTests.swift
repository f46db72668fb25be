import FirmwareImage
import LinkModel
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Testing
import TestSupport
@testable import Flashing

/// A board whose flash work hangs (a flash operation the SoftDevice ends with
/// `NRF_EVT_FLASH_OPERATION_ERROR`, which CODAL waits on for ever) starves its fibers: a
/// buttonless DFU then only disconnects it and stops its advertising. The session resets it
/// with `FF 01` (handled in the interrupt) before the full update that follows the partial
/// flash it gave up, and the board ends running the file.
@Suite struct NeverLeftHungTests {
    @Test(arguments: [0, 1, 3])
    func aHungFlashIsResetBeforeTheNordicFallbackAndTheBoardEndsRunningTheFile(failing operation: Int) throws {
        let old = SessionStoryTests.firmware(.nrf52833, .r1, .heart)
        let file = SessionStoryTests.firmware(.nrf52833, .r1, .counter)
        var faults = FaultPlan(seed: 7)
        faults.flashOperationErrorAt = [operation]
        var sim = Simulation(link: .deviceRequested, faults: faults)
        let id = sim.addBoard(try NordicStoryTests.stockBoard(.microbitV2, running: old))
        let options = SessionStoryTests.options()
        let plan = try FlashPlan.make(firmware: file, board: .microbitV2)
        let run = SimulatedFlash.run(plan: plan, options: options, on: id, named: "sim", in: &sim)
        #expect(run.statistics.faults.flashOperationErrors == 1)
        let outcome = try run.outcome.get()
        #expect(outcome.path == .full && outcome.fallback, "\(outcome.reason.message)")
        #expect(outcome.verified, "\(outcome.unverifiedReason ?? "")")
        // The reset came before the buttonless DFU, and nothing was left waiting on the board.
        let lines = run.trace.entries.map(\.text)
        let reset = try #require(lines.firstIndex { $0.contains("FF 01, reset now") })
        let buttonless = try #require(lines.firstIndex { $0.contains("buttonless DFU") })
        #expect(reset < buttonless)
        #expect(!lines.contains { $0.contains("shutdown waits for the idle fiber") })
        let after = try sim.board(id)
        #expect(!after.flashWorkHangs && after.mode == .application && !after.flashIncomplete)
        try NordicStoryTests.expectApplication(of: after, equals: file)
    }
}
