import SimulatedFlashing
import Testing
import TestSupport
import FirmwareImage
import LinkModel
import SampleFirmware
import SimulatedBoard
@testable import Flashing

/// The read-back after a partial flash on the simulated link: STATUS and REGION_INFO 2 leave in
/// consecutive connection events, each answer in its own event (the S113 queue of one loses
/// nothing), and the program is verified two connection intervals after STATUS left.
@Suite struct ReadBackPacingTests {
    static func partialFlash(link: LinkProfile, board: Board) throws -> SimulatedFlashRun {
        let family = board.family
        var sim = Simulation(link: link)
        let id = sim.addBoard(
            try SessionStoryTests.mcuMgrBoard(board, running: SessionStoryTests.firmware(family, .r1, .heart)))
        let plan = try FlashPlan.make(firmware: SessionStoryTests.firmware(family, .r1, .counter), board: board)
        return SimulatedFlash.run(plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
    }

    @Test(arguments: [LinkProfile.linuxDefault, .deviceRequested, .fast], [Board.microbitV2, .microbitV1])
    func theReadBackTakesTwoIntervalsAndLosesNoAnswer(link: LinkProfile, board: Board) throws {
        let run = try Self.partialFlash(link: link, board: board)
        let outcome = try run.outcome.get()
        #expect(outcome.path == .partial && outcome.verified, "\(outcome.reason.message)")
        #expect(run.statistics.notificationsLostQueueFull == 0)
        let entries = run.trace.entries
        let end = try #require(entries.lastIndex { $0.kind == .write && $0.text.hasSuffix(" 02") })
        let after = entries[(end + 1)...]
        // Region 1 is not asked: a board in application mode is read with STATUS and REGION_INFO 2.
        #expect(after.filter { $0.kind == .write }.map { $0.text.split(separator: " ").last } == ["EE", "0002"])
        let statusArrives = try #require(after.first { $0.kind == .received && $0.text == "EE" })
        let programAnswer = try #require(after.last { $0.kind == .notification && $0.text.hasPrefix("0002") })
        let ci = link.connectionIntervalMicroseconds
        // One request after the other would take 3 intervals from STATUS's event to the answer.
        #expect(programAnswer.t - statusArrives.t < 2 * ci + ci / 2)
        #expect(programAnswer.t - statusArrives.t >= 2 * ci - ci / 2)
    }
}
