import FirmwareImage
import Laboratory
import LinkModel
import McuMgr
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Synchronization
import Testing
import Transport
@testable import Flashing

/// A board with MCUboot whose slot 0 holds the file's image, under a partial flash of another
/// program that was killed: slot 0 still reports the file's image (its hash is the trailer's,
/// from when it was installed), but the program region holds a blank program header and part
/// of the other program. McuMgr cannot rewrite it ("the device already runs this image"), so
/// after the read-back finds the program not there, the session partial-flashes the region.
@Suite struct FallbackAfterActiveImageTests {
    static let board = Board.microbitV2

    static func plan(_ program: SampleFirmware.ProgramID) throws -> FlashPlan {
        try FlashPlan.make(firmware: SessionStoryTests.firmware(board.family, .r1, program), board: board)
    }

    /// An MCUboot board running the counter program's image, after a partial flash of the heart
    /// program that was killed in its second page.
    static func boardAfterKilledPartialFlash() throws -> (SimulatedBoard, FlashPlan) {
        let target = try plan(.counter)
        let other = try plan(.heart)
        let fresh = try SimulatedBoard.mcuMgrBoard(board, primary: try #require(target.fullImage).bytes)
        let blocksPerPage = Int(board.family.pageSize / 64)
        // Where to kill: a while after the first page of the other program was acknowledged.
        var clean = Simulation(link: .deviceRequested)
        let cleanID = clean.addBoard(fresh)
        let cleanRun = SimulatedFlash.run(
            plan: other, options: SessionStoryTests.options(.partial), on: cleanID, named: "sim", in: &clean)
        #expect(cleanRun.result.error == nil, "\(cleanRun.result.error ?? "")")
        let acks = cleanRun.trace.entries.filter { $0.kind == .input && $0.text.hasSuffix(" 01FF") }.map(\.t)
        #expect(acks.count > blocksPerPage + 8)
        let killAt = Duration.microseconds(acks[blocksPerPage + 4] + 1_000)

        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(fresh)
        let killed = SimulatedFlash.run(
            plan: other, options: SessionStoryTests.options(.partial), on: id, named: "sim", in: &sim,
            deadline: killAt)
        #expect(killed.result.error != nil, "the killed run did not finish")
        return (try sim.board(id), target)
    }

    @Test func aFullUpdateThatFindsItsImageActiveOverAnUnfinishedProgramEndsVerifiedByPartialFlashing() throws {
        let (board, target) = try Self.boardAfterKilledPartialFlash()
        let program = try #require(target.program)
        let header = try board.readFlash(program.magicAddress..<(program.magicAddress + 32))
        #expect(header != Array(target.image.read(program.magicAddress..<(program.magicAddress + 32))))

        // The plain run, choosing the full update (as the estimate does for large programs).
        var options = SessionStoryTests.options(.auto)
        options.prefer = .full
        let notes = Mutex<[SessionReport]>([])
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(board)
        let run = SimulatedFlash.run(
            plan: target, options: options, on: id, named: "sim", in: &sim,
            onEvent: { event in
                guard case let .flow(r) = event.report, let value = r.value(as: SessionReport.self) else { return }
                notes.withLock { $0.append(value) }
            })
        let after = try sim.board(id)
        let outcome = try run.outcome.get()
        #expect(outcome.full?.alreadyInstalled == true, "McuMgr found the image active and sent nothing")
        #expect(outcome.full?.bytesSent == 0)
        #expect(outcome.path == .partial)
        #expect(outcome.reason.code == "active-image-rewritten")
        #expect(outcome.verified)
        #expect((outcome.partial?.blocks ?? 0) > 0)
        #expect(
            notes.withLock { $0 }.contains {
                if case .activeImageRewrittenByPartialFlash(.blankHeader) = $0 { return true }
                return false
            })
        #expect(CampaignInvariants.checkSuccess(outcome, plan: target, board: after).isEmpty)
        #expect(!after.flashIncomplete)
    }

    @Test func aForcedFullUpdateDoesNotPartialFlashAndSaysTheBoardWasNotLeftRunningTheProgram() throws {
        let (board, target) = try Self.boardAfterKilledPartialFlash()
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(board)
        let run = SimulatedFlash.run(
            plan: target, options: SessionStoryTests.options(.full), on: id, named: "sim", in: &sim)
        let message = try #require(run.result.error)
        #expect(message.contains("was not left running it"), "\(message)")
        #expect(try sim.board(id).flash.wordWriteCount == board.flash.wordWriteCount, "nothing was written")
    }
}
