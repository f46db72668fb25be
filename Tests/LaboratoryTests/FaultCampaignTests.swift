import Foundation
import FirmwareImage
import LinkModel
import PartialFlashing
import SampleFirmware
@testable import SimulatedBoard
import SimulatedFlashing
import Testing
@testable import Flashing
@testable import Laboratory

/// Short fault campaigns on each path (the long ones run from `bitflash-lab sim campaign` and the
/// CI script), and proof that the invariant checker catches what it claims to catch.
@Suite struct FaultCampaignTests {
    @Test(arguments: CampaignPath.allCases)
    func shortCampaignKeepsEveryInvariant(path: CampaignPath) {
        var campaign = FaultCampaign(FaultCampaign.Configuration(runs: 150, seed: 2026, paths: [path]))
        let report = campaign.run()
        #expect(report.runs == 150)
        #expect(report.violations.isEmpty, "\(report.table())")
        // The campaign injected faults and some runs failed and were repaired, or it proves little.
        #expect(report.faults.values.reduce(0, +) > 150)
        // Every failed or unverified run was read back running its program by the plain run after it.
        let failed = report.outcomes[CampaignOutcome.failedCleanly.rawValue] ?? 0
        let unverified = report.outcomes[CampaignOutcome.unverified.rawValue] ?? 0
        #expect(report.repairedAfterFailure == failed + unverified)
        switch path {
        case .partial:
            #expect((report.outcomes["partial"] ?? 0) > 75)
            // Some runs were killed mid-flash, and some next runs continued the unfinished write.
            #expect(report.kills > 10)
            #expect(report.resumedAcrossRuns > 0, "\(report.table())")
        case .full: #expect((report.outcomes["full"] ?? 0) > 75)
        case .auto, .nordic:
            #expect(
                (report.outcomes["partial"] ?? 0) + (report.outcomes["full"] ?? 0) + (report.outcomes["fallback"] ?? 0)
                    > 75)
        }
    }

    @Test func theReportCutsALongErrorAfterAWholeWordWithAnEllipsis() {
        let short = "McuMgr: the board refused the upload (rc 6)"
        #expect(CampaignReport.shortened(short) == short)
        let long = String(repeating: "word ", count: 40) + "(group 1, rc 6)"
        let listed = CampaignReport.shortened(long, limit: 27)
        #expect(listed == "word word word word word …")
        #expect(CampaignReport.shortened("a, (group 1, rc 6) remains", limit: 13) == "a, (group 1 …")
    }

    @Test func progressIsReportedAfterEveryRunWithTheViolationsSoFar() {
        var campaign = FaultCampaign(FaultCampaign.Configuration(runs: 5, seed: 7))
        var seen: [Int] = []
        let report = campaign.run { soFar in
            seen.append(soFar.runs)
            #expect(soFar.violations.isEmpty)
        }
        #expect(seen == [1, 2, 3, 4, 5])
        #expect(report.runs == 5)
    }

    @Test func theSameSeedGivesTheSameReport() throws {
        let configuration = FaultCampaign.Configuration(runs: 30, seed: 7)
        var first = FaultCampaign(configuration), second = FaultCampaign(configuration)
        let a = first.run(), b = second.run()
        #expect(a.outcomes == b.outcomes)
        #expect(a.faults == b.faults)
        #expect(a.percentile(1) == b.percentile(1))
    }

    @Test func oneRunOfALongCampaignRunsAgainOnItsOwnWithItsTrace() {
        var whole = FaultCampaign(FaultCampaign.Configuration(runs: 12, seed: 3, paths: [.partial]))
        let report = whole.run()
        var configuration = FaultCampaign.Configuration(runs: 1, seed: 3, paths: [.partial])
        configuration.firstRun = 11
        configuration.recordsTrace = true
        var single = FaultCampaign(configuration)
        let one = single.run()
        #expect(one.runs == 1)
        #expect(one.seconds.first == report.seconds.last, "run 11 alone is run 11 of the campaign")
        #expect(single.lastTraces.map(\.part) == ["run 11"])
        #expect((single.lastTraces.first?.trace.entries.count ?? 0) > 100)
    }

    @Test func theTraceOfAFailedRunHoldsItsRepairRunAndReadsAsATraceFile() throws {
        // Run 11 of this hostile campaign fails (the board hides that it marked the image for
        // test); the plain run after it repairs the board.
        var configuration = FaultCampaign.Configuration(runs: 1, seed: 20261122, paths: [.auto])
        configuration.hostile = .wrongSlotHash
        configuration.firstRun = 11
        configuration.recordsTrace = true
        var campaign = FaultCampaign(configuration)
        let report = campaign.run()
        try #require(report.outcomes[CampaignOutcome.failedCleanly.rawValue] == 1)
        #expect(campaign.lastTraces.map(\.part) == ["run 11", "run 11 repair"])
        var text = Data()
        for (part, trace) in campaign.lastTraces { text += try TraceFile.encode(trace, names: [part]) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("campaign-\(UUID().uuidString).trace")
        defer { try? FileManager.default.removeItem(at: file) }
        try text.write(to: file)
        let lines = try TraceFile.read(file.path)
        #expect(Set(lines.map(\.name)) == ["run 11", "run 11 repair"])
        #expect(lines.contains { $0.name == "run 11 repair" && $0.kind == "write" })
    }

    /// Runs that once broke an invariant, kept so they never do again:
    /// * seed 5 run 1790: a duplicated, delayed `01 FF` of the block before a page opener was
    ///   taken for the opener's answer; the next block reached the board during the erase and
    ///   overwrote its buffer, so the opener was never written (its own answer was lost);
    /// * seed 5 run 871: after the block that writes the program hash went out, the writer went
    ///   back and erased an earlier page, then failed: the board reported the new program over
    ///   a half-written page, and the next run called it up to date.
    /// Since duplicated notifications left the regular campaign (a BLE link cannot duplicate
    /// one; `sim campaign --hostile duplicated-notifications` still injects them) the fault draws
    /// of these runs differ from the ones that broke, so they are two more runs that must stay
    /// clean; the first case is what no client can prevent (see `PartialFlashWriter`).
    @Test(arguments: [1790, 871])
    func aRunThatOnceBrokeAnInvariantKeepsThemAll(run: Int) {
        var configuration = FaultCampaign.Configuration(runs: 1, seed: 5, paths: [.partial])
        configuration.firstRun = run
        var campaign = FaultCampaign(configuration)
        let report = campaign.run()
        #expect(report.violations.isEmpty, "\(report.table())")
    }

    static func plan(_ family: ChipFamily, _ program: SampleFirmware.ProgramID) throws -> FlashPlan {
        let image = SampleFirmware.image(family: family, runtime: .r1, program: program)
        return try FlashPlan.make(
            firmware: Firmware(
                fileName: "t.hex", format: .intelHex,
                sections: [.init(family: family, image: image, warnings: [])]),
            board: family == .nrf51 ? .microbitV1 : .microbitV2)
    }

    @Test func checkerCatchesACorruptedByteInTheProgramRegion() throws {
        let plan = try Self.plan(.nrf52833, .counter)
        let program = try #require(plan.program)
        let outcome = SessionOutcome(
            path: .partial, reason: FlashReason(code: "runtime-matches", message: "test"), fallback: false,
            partial: PartialFlashStats(blocks: 10, bytes: 640, pages: 1, verified: true))
        let good = try SimulatedBoard(.microbitV2, image: plan.image)
        #expect(CampaignInvariants.checkSuccess(outcome, plan: plan, board: good).isEmpty)

        var corrupted = plan.image
        let at = program.region.lowerBound + 100
        try corrupted.write([plan.image.read(at..<(at + 1))[0] ^ 0x10], at: at, overwrite: true)
        let bad = try SimulatedBoard(.microbitV2, image: corrupted)
        let found = CampaignInvariants.checkSuccess(outcome, plan: plan, board: bad)
        #expect(found.map(\.rule) == ["flash-differs"])
        #expect(found.first?.detail.contains(String(at, radix: 16, uppercase: true)) == true)
    }

    @Test func checkerCatchesAVerifiedBoardThatWouldBootIntoPairingMode() throws {
        let plan = try Self.plan(.nrf52833, .counter)
        let outcome = SessionOutcome(
            path: .partial, reason: FlashReason(code: "runtime-matches", message: "test"), fallback: false,
            partial: PartialFlashStats(blocks: 10, bytes: 640, pages: 1, verified: true))
        var board = try SimulatedBoard(.microbitV2, image: plan.image)
        board.markFlashIncomplete()
        board.reset()
        #expect(
            CampaignInvariants.checkSuccess(outcome, plan: plan, board: board).map(\.rule) == [
                "boots-into-pairing-mode"
            ])
    }

    @Test func anUnverifiedResultIsItsOwnCategoryWithItsOwnChecks() throws {
        let plan = try Self.plan(.nrf52833, .counter)
        var stats = PartialFlashStats(blocks: 10, bytes: 640, pages: 1, verified: false)
        stats.unverifiedReason = "the board did not accept a connection within 10 s of its restart"
        let outcome = SessionOutcome(
            path: .partial, reason: FlashReason(code: "runtime-matches", message: "test"), fallback: false,
            partial: stats)
        #expect(CampaignOutcome(outcome) == .unverified)
        // Written but not read back: the flash must hold the program; the board may be in any mode.
        var board = try SimulatedBoard(.microbitV2, image: plan.image)
        board.markFlashIncomplete()
        #expect(CampaignInvariants.checkSuccess(outcome, plan: plan, board: board).isEmpty)
        let other = try SimulatedBoard(.microbitV2, image: try Self.plan(.nrf52833, .heart).image)
        #expect(CampaignInvariants.checkSuccess(outcome, plan: plan, board: other).map(\.rule) == ["flash-differs"])
        stats.unverifiedReason = nil
        let silent = SessionOutcome(path: .partial, reason: outcome.reason, fallback: false, partial: stats)
        #expect(CampaignInvariants.checkSuccess(silent, plan: plan, board: board).map(\.rule) == ["unclear-error"])
    }

    /// A V2 board in pairing mode holding the heart, partially flashed with the counter: the
    /// board before (its flash counters reset), after, and the program region it declared.
    static func partialFlashOfTheEdit() throws -> (
        before: SimulatedBoard, after: SimulatedBoard, declared: Range<UInt32>
    ) {
        var sim = Simulation(link: .fast)
        var board = try SimulatedBoard(.microbitV2, image: try plan(.nrf52833, .heart).image, mode: .pairing)
        let declared = CampaignInvariants.declaredProgramRegion(of: board)
        board.resetFlashCounters()
        let id = sim.addBoard(board)
        let run = SimulatedFlash.run(
            plan: try plan(.nrf52833, .counter), options: FlashOptions(mode: .partial),
            on: id, named: "sim", in: &sim)
        #expect(run.result.path == .partial)
        return (board, try sim.board(id), declared)
    }

    @Test func checkerCatchesAWriteOutsideTheDeclaredRegion() throws {
        let (board, after, declared) = try Self.partialFlashOfTheEdit()
        #expect(!declared.isEmpty)
        #expect(CampaignInvariants.checkWrites(before: board, after: after, declared: declared).isEmpty)
        // Had the board declared only the program's first page, the same writes would break the rule.
        let narrow = declared.lowerBound..<(declared.lowerBound + 0x1000)
        let found = CampaignInvariants.checkWrites(before: board, after: after, declared: narrow)
        #expect(found.first?.rule == "write-outside-region")
    }

    @Test func checkerCatchesAWordWrittenMoreOftenBetweenErasesThanTheChipAllows() throws {
        let (board, flashed, declared) = try Self.partialFlashOfTheEdit()
        var after = flashed
        #expect(after.flash.mostWritesPerWord >= 1)
        #expect(CampaignInvariants.checkWrites(before: board, after: after, declared: declared).isEmpty)
        // Two more writes of the program's first word, its page not erased in between: one too many.
        let word = try after.readFlash(declared.lowerBound..<(declared.lowerBound + 4))
        for _ in 0..<2 { try after.device.flash.writeWords(word, at: declared.lowerBound) }
        let found = CampaignInvariants.checkWrites(before: board, after: after, declared: declared)
        #expect(found.map(\.rule) == ["writes-per-word"])
        #expect(
            found.first?.detail.contains(String(declared.lowerBound, radix: 16, uppercase: true)) == true, "\(found)")
    }

    @Test func checkerCatchesADeadlineAndAnUnclearError() {
        #expect(
            CampaignInvariants.checkFailure(SimulatedBoardError.deadlineExceeded(.seconds(900)), message: "x").map(
                \.rule) == ["deadline"])
        #expect(
            CampaignInvariants.checkFailure(FlashError.partialImpossible("why"), message: "").map(\.rule) == [
                "unclear-error"
            ])
        #expect(
            CampaignInvariants.checkFailure(
                FlashError.partialImpossible("why"),
                message: "partial flashing is impossible: the runtime differs"
            ).isEmpty)
    }

    @Test func checkerCatchesRetriesBeyondTheirBounds() {
        let options = FaultCampaign.options(.partial)
        let outcome = SessionOutcome(
            path: .partial, reason: FlashReason(code: "runtime-matches", message: "test"), fallback: false,
            partial: PartialFlashStats(
                blocks: 10, bytes: 640, pages: 1,
                retries: options.partial.runRetryLimit + 1, verified: true))
        #expect(
            CampaignInvariants.checkBounds(outcome, connections: 2, options: options).map(\.rule) == ["retry-bound"])
        #expect(CampaignInvariants.checkBounds(nil, connections: 2, options: options).isEmpty)
    }
}
