import FirmwareImage
@testable import Laboratory
import LinkModel
import PartialFlashing
import PartialFlashingFrames
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Synchronization
import Testing
import Transport
@testable import Flashing

/// A partial flash cut short (the board resets, bitflash is killed) and continued by the next
/// run from its last checkpoint: the board ends byte-exact, wherever the cut fell.
@Suite struct ResumeAcrossRunsTests {
    static let board = Board.microbitV2

    static func plan(_ program: SampleFirmware.ProgramID, runtime: SampleFirmware.RuntimeID = .r1) throws -> FlashPlan {
        try FlashPlan.make(firmware: SessionStoryTests.firmware(board.family, runtime, program), board: board)
    }

    /// A stock board (partial flashing only) holding r1 with the heart program, in pairing mode.
    static func freshBoard() throws -> SimulatedBoard {
        try SimulatedBoard(
            board, image: SampleFirmware.image(family: board.family, runtime: .r1, program: .heart),
            mode: .pairing, bluetoothInApplicationMode: true)
    }

    struct Run {
        var run: SimulatedFlashRun
        var board: SimulatedBoard
        var checkpoint: ResumePoint?
        /// The partial flash's typed reports, in order.
        var reports: [PartialFlashReport]
    }

    /// One bitflash run on `board`: under `faults`, stopped at `killAt` (as if killed) when given.
    static func flash(_ board: SimulatedBoard, plan: FlashPlan, faults: FaultPlan = .none, killAt: Duration? = nil)
        throws -> Run
    {
        var sim = Simulation(link: .deviceRequested, faults: faults)
        let id = sim.addBoard(board)
        let keeper = CheckpointKeeper()
        let reports = Mutex<[PartialFlashReport]>([])
        let run = SimulatedFlash.run(
            plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim,
            deadline: killAt ?? SimulatedFlash.defaultDeadline,
            onEvent: { event in
                keeper.keep(event)
                guard case let .flow(r) = event.report, let value = r.value(as: PartialFlashReport.self) else { return }
                reports.withLock { $0.append(value) }
            })
        return Run(
            run: run, board: try sim.board(id), checkpoint: keeper.point, reports: reports.withLock { $0 })
    }

    /// The times (µs) at which the flow received each `01 FF`, in a fault-free run of `plan`.
    static func ackTimes(_ plan: FlashPlan) throws -> (acks: [Int64], erases: [(t: Int64, page: String)]) {
        let clean = try flash(freshBoard(), plan: plan)
        let acks = clean.run.trace.entries.filter { $0.kind == .input && $0.text.hasSuffix(" 01FF") }.map(\.t)
        let erases = clean.run.trace.entries.filter { $0.kind == .device && $0.text.contains("erased page") }
            .map { ($0.t, String($0.text.split(separator: " ").last ?? "")) }
        return (acks, erases)
    }

    static func expectByteExact(_ board: SimulatedBoard, _ plan: FlashPlan, _ outcome: SessionOutcome) {
        #expect(CampaignInvariants.checkSuccess(outcome, plan: plan, board: board).isEmpty)
        #expect(!board.flashIncomplete, "END_OF_TRANSMISSION cleared flashIncomplete")
    }

    enum Cut: String, CaseIterable, CustomTestStringConvertible {
        /// The very instant the answer to the first page's last block arrives: the reset takes it
        /// with it, so whether the page counts as written depends on which comes first.
        case atPageBoundary
        /// 1 µs after the first page's last block was acknowledged: the next page's opener is on its way.
        case justAfterPageBoundary
        /// While the second page is erased (its first block arrived; the erase has not finished).
        case duringErase
        /// In the middle of the second page, right after a block was acknowledged.
        case midPage
        var testDescription: String { rawValue }
    }

    @Test(arguments: Cut.allCases)
    func aResetThenAKillIsResumedByTheNextRunAndEndsByteExact(cut: Cut) throws {
        let plan = try Self.plan(.counter)
        let blocksPerPage = Int(Self.board.family.pageSize / 64)
        let (acks, erases) = try Self.ackTimes(plan)
        #expect(acks.count > blocksPerPage + 20)
        let resetAt: Int64
        switch cut {
        case .atPageBoundary: resetAt = acks[blocksPerPage - 1]
        case .justAfterPageBoundary: resetAt = acks[blocksPerPage - 1] + 1
        case .duringErase:
            // The second erase of the run opens the program's second page; reset 1 µs before it ends.
            #expect(erases.count >= 2)
            resetAt = erases[1].t - 1
        case .midPage: resetAt = acks[blocksPerPage + 10] + 3_000
        }
        var faults = FaultPlan(seed: 1)
        faults.resetDeviceAt = [.microseconds(resetAt)]
        let first = try Self.flash(
            Self.freshBoard(), plan: plan, faults: faults, killAt: .microseconds(resetAt + 200_000))
        #expect(first.run.result.error != nil, "the killed run did not finish")
        #expect(first.board.flashIncomplete)
        if cut == .duringErase {
            #expect(
                !first.run.trace.entries.contains {
                    $0.kind == .device && $0.text.contains("erased page \(erases[1].page)")
                },
                "the reset came before the erase finished")
        }
        let point = try #require(first.checkpoint)
        if cut == .atPageBoundary {
            #expect(point.block == 0 || point.block == blocksPerPage, "a page start, whichever came first")
        } else {
            #expect(point.block == blocksPerPage, "the first page was acknowledged, the second is where to continue")
        }

        var next = plan
        next.resume = point
        let second = try Self.flash(first.board, plan: next)
        let outcome = try second.run.outcome.get()
        #expect(outcome.path == .partial)
        // Continuing at block 0 of a board that shows its program is the same as starting over.
        let resumed = point.block > 0 ? point.block : nil
        #expect(outcome.partial?.resumedAtBlock == resumed)
        #expect(second.run.result.reason.details?.resumedAtBlock == resumed.map { $0 + 1 })
        // Only the blocks from the saved page on were sent again.
        #expect(outcome.partial?.blocks == acks.count - point.block)
        #expect(outcome.partial?.bytes == 64 * (acks.count - point.block))
        Self.expectByteExact(second.board, plan, outcome)
        #expect(second.checkpoint != nil)
    }

    @Test func aResetWhileTheFirstPageIsErasedLeavesNoProgramAndTheNextRunStillFinishes() throws {
        let plan = try Self.plan(.counter)
        let (_, erases) = try Self.ackTimes(plan)
        var faults = FaultPlan(seed: 1)
        faults.resetDeviceAt = [.microseconds(erases[0].t - 1)]
        let first = try Self.flash(
            Self.freshBoard(), plan: plan, faults: faults, killAt: .microseconds(erases[0].t + 100_000))
        // The torn first page holds no magic: the board boots reporting no program at all.
        #expect(first.board.memoryMap.allSatisfy { $0.start == 0 && $0.end == 0 })
        let point = try #require(first.checkpoint)
        #expect(point.block == 0)
        var next = plan
        next.resume = point
        let second = try Self.flash(first.board, plan: next)
        let outcome = try second.run.outcome.get()
        #expect(second.run.result.reason.code == "runtime-matches")
        #expect(outcome.partial?.resumedAtBlock == 0)
        Self.expectByteExact(second.board, plan, outcome)
        // Without the saved point the same board cannot be flashed partially.
        let blind = try Self.flash(first.board, plan: plan)
        #expect(blind.run.result.error != nil)
    }

    @Test func aSavedPointOfAnotherProgramIsNotUsedAndTheFlashStartsOver() throws {
        let counter = try Self.plan(.counter)
        let (acks, _) = try Self.ackTimes(counter)
        let first = try Self.flash(Self.freshBoard(), plan: counter, killAt: .microseconds(acks[70]))
        let point = try #require(first.checkpoint)
        // The user flashes another program: the saved point (for 'counter') must not be used.
        var other = try Self.plan(.large)
        other.resume = point
        let second = try Self.flash(first.board, plan: other)
        let outcome = try second.run.outcome.get()
        #expect(outcome.partial?.resumedAtBlock == nil)
        let otherHash = try #require(other.program).programHash.hexString
        #expect(second.reports.contains(.notContinuing(.anotherProgram(saved: point.programHash, file: otherHash))))
        Self.expectByteExact(second.board, other, outcome)
    }

    @Test func theDecisionIsReportedBeforeAnythingIsWritten() throws {
        let plan = try Self.plan(.counter)
        let run = try Self.flash(Self.freshBoard(), plan: plan)
        let entries = run.run.trace.entries
        let decision = try #require(
            entries.firstIndex { $0.kind == .report && $0.text.hasPrefix("decision: runtime-matches") })
        let firstBlock = try #require(entries.firstIndex { $0.kind == .write && $0.text.hasPrefix("command 01") })
        #expect(decision < firstBlock)
        let details = try #require(run.run.result.reason.details)
        #expect(details.boardRuntimeHash == plan.program?.runtimeHash.hexString)
        #expect(details.programHash == plan.program?.programHash.hexString)
    }
}
