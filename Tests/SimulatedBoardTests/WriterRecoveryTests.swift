import FirmwareImage
import LinkModel
import PartialFlashing
import Testing
import Transport
@testable import SimulatedBoard

/// A lost 4th packet and a lost block cost one retry: the block's packets sent again with the same
/// numbers, which the board takes where it lacks them; an answer that comes after the block
/// timeout (a slow erase) is the block's answer, the packets sent again being ignored by the
/// board. A lost `01 FF` or `01 AA` costs the two fill-ins and then the `FF 00` fence (the board
/// restarts after its pending flash work), one REGION_INFO on the fresh connection and the block
/// again. On the simulated CODAL board, whose flash work runs after its
/// write handler (docs/protocols/partial-flashing.md §3.1), over the link model.
@Suite struct WriterRecoveryTests {
    static let family = ChipFamily.nrf52833
    static let old = Fixture.image(family: family, magicAt: 0x47000, programLength: 6000, seed: 3)
    static let new = Fixture.image(
        family: family, magicAt: 0x47000, programLength: 9000, seed: 5,
        programHash: [0xC1, 0x00, 0x81, 0x00, 0xAB, 0x00, 0xDD, 0x00])
    /// The block whose transmission the faults hit: the 10th.
    static let block = 9

    struct Run {
        var stats: PartialFlashStats?
        var error: String?
        var board: SimulatedBoard
        var faults: FaultCounters
        var trace: Trace
    }

    static func flash(_ faults: FaultPlan) throws -> Run {
        let program = try #require(MakeCodeProgram.find(in: new, family: family))
        var sim = Simulation(link: .deviceRequested, faults: faults)
        // The trace shows a typed report as this closure words it: a fill-in by its value.
        sim.reportWords = { r in
            if case .fillingIn? = r.value(as: PartialFlashWriterReport.self) { return "fill-in" }
            return r.description
        }
        let id = sim.addBoard(
            try SimulatedBoard(.microbitV2, image: old, mode: .pairing, bluetoothInApplicationMode: true))
        let run = sim.run(
            PartialFlashFlow(image: new, program: program, family: family), on: id, deadline: .seconds(120))
        var stats: PartialFlashStats?
        var error: String?
        switch run.outcome {
        case let .success(.flashed(s)): stats = s
        case let .success(other): error = "\(other)"
        case let .failure(e): error = "\(e)"
        }
        return Run(
            stats: stats, error: error, board: try sim.board(id), faults: run.statistics.faults, trace: run.trace)
    }

    /// Where the writes and notifications of `block` fall in a run without faults: the index of
    /// each of its 4 packets among the writes, and of its `01 FF` among the notifications.
    static func positions() throws -> (packets: [Int], answer: Int) {
        let clean = try flash(FaultPlan(seed: 1))
        let writes = clean.trace.entries.filter { $0.kind == .write }.map(\.text)
        let flashData = writes.indices.filter {
            writes[$0].hasPrefix("command 01") && writes[$0].count == "command ".count + 40
        }
        let notifications = clean.trace.entries.filter { $0.kind == .notification }.map(\.text)
        let acks = notifications.indices.filter { notifications[$0] == "01FF" }
        return (Array(flashData[(4 * block)..<(4 * block + 4)]), acks[block])
    }

    /// The board holds the new program over its whole region and nothing was written outside it.
    static func expectFlashed(_ run: Run, retries: Int, resyncs: Int, _ comment: Comment) throws {
        guard let stats = run.stats else {
            Issue.record("\(comment): not flashed: \(run.error ?? "?")")
            return
        }
        #expect(stats.retries == retries && stats.resyncs == resyncs, "\(comment): \(stats)")
        #expect(stats.verified)
        let program = try #require(MakeCodeProgram.find(in: new, family: family))
        let expected = new.read(program.region, fill: 0xFF)
        #expect(try run.board.readFlash(program.region) == expected, comment)
        #expect(
            run.board.flash.writeLog.allSatisfy { $0.lowerBound >= 0x47000 && $0.upperBound <= 0x73000 },
            "\(comment): \(run.board.flash.writeLog)")
    }

    @Test func aLostAnswerCostsTwoFillInsAndOneResynchronisation() throws {
        var faults = FaultPlan(seed: 1)
        faults.dropNotificationAt = [try Self.positions().answer]
        let run = try Self.flash(faults)
        #expect(run.faults.droppedNotifications == 1)
        try Self.expectFlashed(run, retries: 3, resyncs: 1, "lost 01 FF")
    }

    @Test func aLostFourthPacketCostsOneRetry() throws {
        var faults = FaultPlan(seed: 1)
        faults.dropWriteAt = [try Self.positions().packets[3]]
        let run = try Self.flash(faults)
        #expect(run.faults.droppedWrites == 1)
        try Self.expectFlashed(run, retries: 1, resyncs: 0, "lost 4th packet")
    }

    @Test func aLostOutOfOrderAnswerCostsTwoFillInsAndOneResynchronisation() throws {
        // The 2nd packet is lost: the 3rd makes the board answer 01 AA, which is lost in turn.
        let at = try Self.positions()
        var faults = FaultPlan(seed: 1)
        faults.dropWriteAt = [at.packets[1]]
        faults.dropNotificationAt = [at.answer]
        let run = try Self.flash(faults)
        #expect(run.trace.entries.contains { $0.kind == .fault && $0.text == "notification lost: 01AA" })
        try Self.expectFlashed(run, retries: 3, resyncs: 1, "lost 01 AA")
    }

    @Test func aLostBlockCostsOneRetry() throws {
        var faults = FaultPlan(seed: 1)
        faults.dropWriteAt = Set(try Self.positions().packets)
        let run = try Self.flash(faults)
        #expect(run.faults.droppedWrites == 4)
        try Self.expectFlashed(run, retries: 1, resyncs: 0, "lost block")
    }

    @Test func anAnswerAfterTheTimeoutIsTheBlocksAnswerAndCostsOneRetry() throws {
        // Some page erases take 14 times the datasheet's 85 ms (1.19 s): the page opener's 01 FF
        // comes after the 1 s block timeout; the packets sent again meanwhile are ignored by the
        // board, which is still working on the block, and no barrier is needed.
        var lateAnswers = 0
        for seed in UInt64(1)...12 {
            var faults = FaultPlan(seed: seed)
            faults.slowErase = 0.4
            faults.slowEraseFactor = 14
            let run = try Self.flash(faults)
            guard run.faults.slowErases > 0 else { continue }
            let fillIns = run.trace.entries.filter {
                $0.kind == .report && $0.text == "retry: fill-in"
            }
            lateAnswers += fillIns.count
            #expect(fillIns.count == run.faults.slowErases, "seed \(seed)")
            try Self.expectFlashed(run, retries: run.faults.slowErases, resyncs: 0, "seed \(seed)")
        }
        #expect(lateAnswers >= 3, "late answers were really seen")
    }

    @Test func anEraseSlowerThanEveryFillInStillEndsWithTheProgram() throws {
        // Erases of 2.55 s, longer than the block timeout and both fill-ins: the board's late
        // answer must never be taken for a later transmission's.
        var slow = 0
        for seed in UInt64(1)...10 {
            var faults = FaultPlan(seed: seed)
            faults.slowErase = 0.3
            faults.slowEraseFactor = 30
            let run = try Self.flash(faults)
            slow += run.faults.slowErases
            guard let stats = run.stats else {
                Issue.record("seed \(seed): not flashed: \(run.error ?? "?")")
                continue
            }
            #expect(stats.verified, "seed \(seed)")
            let program = try #require(MakeCodeProgram.find(in: Self.new, family: Self.family))
            #expect(
                try run.board.readFlash(program.region) == Self.new.read(program.region, fill: 0xFF), "seed \(seed)")
        }
        #expect(slow >= 3, "slow erases were really injected")
    }
}
