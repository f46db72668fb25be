import FirmwareImage
import Foundation
import LinkModel
import PartialFlashing
import PartialFlashingFrames
import Testing
import Transport
@testable import SimulatedBoard

/// The fence the writer recovers through after a block whose answer did not come: `FF 00`.
/// CODAL and DAL raise it as an event (`MicroBitPartialFlashingService::onDataWritten`,
/// `MICROBIT_RESET` with `MICROBIT_MODE_PAIRING`) on the listener that runs the flash work
/// (`partialFlashingEvent`), which the message bus runs after every event raised before it
/// (codal-core `MessageBus::send`, `idle`, `async_callback` with
/// `MESSAGE_BUS_LISTENER_QUEUE_IF_BUSY`; DAL `MicroBitMessageBus` the same): the board restarts
/// into pairing mode only after the pending block was erased, burnt and answered.
@Suite struct FenceTests {
    typealias Bench = FlashWorkOrderTests.TimedBench
    static let ok: [UInt8] = [0x01, 0xFF]

    /// A board in pairing mode whose page at `page` holds old bytes in its first 64.
    static func board(_ kind: Board, page: UInt32) throws -> SimulatedBoard {
        var image = MemoryImage()
        try image.write([UInt8](repeating: 0x00, count: 64), at: page)
        var b = try SimulatedBoard(profile: BoardProfile(board: kind), image: image)
        b.reset(holdingButtons: true)
        return b
    }

    @Test(arguments: [(Board.microbitV2, UInt32(0x50000)), (.microbitV1, 0x30000)])
    func ff00WaitsBehindThePendingFlashEventAndRestartsOnlyAfterItsAnswer(kind: Board, page: UInt32) throws {
        var b = Bench(try Self.board(kind, page: page))
        let data = Fixture.pattern(64, seed: 9)
        b.write([0x00, 0x02])
        b.answers = []
        // A page opener: the key-value write, the page's erase, the burn, then `01 FF`.
        b.block(page, data, first: 0)
        b.write([0xFF, 0x00])
        // Mid-erase: FF 00 was handled by the write handler but waits behind the flash event.
        let timing = DeviceTiming.of(b.board.profile.family)
        b.run(until: timing.eventDispatch + timing.pageErase + timing.pageErase / 2)
        #expect(b.reboots == 0 && b.answers.isEmpty)
        b.run()
        // The block's answer came first, and only then the restart, into pairing mode.
        #expect(b.answers.map(\.bytes) == [Self.ok])
        #expect(b.reboots == 1 && b.board.mode == .pairing)
        #expect(try b.board.readFlash(page..<(page + 64)) == data)
    }

    // MARK: The writer on the simulated board

    static let family = ChipFamily.nrf52833
    static let old = Fixture.image(family: family, magicAt: 0x47000, programLength: 6000, seed: 3)
    static let new = Fixture.image(
        family: family, magicAt: 0x47000, programLength: 9000, seed: 5,
        programHash: [0xC1, 0x00, 0x81, 0x00, 0xAB, 0x00, 0xDD, 0x00])

    static func flash(_ faults: FaultPlan) throws -> SimulatedPartialFlash {
        try SimulatedPartialFlash(old: old, new: new, family: family, mode: .pairing, faults: faults)
    }

    @Test func aFlashEventSlowerThanEveryTimeoutEndsVerifiedWithTheProgramByteForByte() throws {
        // Erases of 85 ms × 50 = 4.25 s: longer than the block timeout, both fill-ins and the
        // 500 ms the old recovery waited before its REGION_INFO barrier, which then reset
        // `offset` under the pending event. Behind the fence, the late `01 FF` is never counted.
        let program = try #require(MakeCodeProgram.find(in: Self.new, family: Self.family))
        let expected = Self.new.read(program.region, fill: 0xFF)
        var slow = 0
        var fences = 0
        for seed in UInt64(1)...12 {
            var faults = FaultPlan(seed: seed)
            faults.slowErase = 0.5
            faults.slowEraseFactor = 50
            let run = try Self.flash(faults)
            slow += run.faults.slowErases
            fences += run.writes.filter { $0 == "command FF00" }.count
            guard case let .success(.flashed(stats)) = run.outcome else {
                Issue.record("seed \(seed): \(run.outcome)")
                continue
            }
            #expect(stats.verified, "seed \(seed)")
            #expect(try run.board.readFlash(program.region) == expected, "seed \(seed)")
            #expect(!run.board.flashWorkHangs, "seed \(seed)")
            #expect(
                run.board.flash.writeLog.allSatisfy { $0.lowerBound >= 0x47000 && $0.upperBound <= 0x73000 },
                "seed \(seed): nothing burnt outside the program region")
        }
        #expect(slow >= 3 && fences >= 2, "slow erases were injected (\(slow)) and fenced (\(fences))")
    }

    @Test func aRecoveryAfterALostAnswerSendsTheBlockAgainAfterTheRestartAndTheLastBlockFromTheFirst() throws {
        // Block 70 (in the page at 0x48000, opened by block 65) loses its answer: after the
        // fence, block 70 again. The last block's answer lost: END_OF_TRANSMISSION burns it once
        // more, so it may not go again alone (nWRITE), and the program hash went out before it,
        // so the write goes on from the first block, whose page holds the hash.
        let clean = try Self.flash(FaultPlan(seed: 1))
        let acks = clean.notifications.indices.filter { clean.notifications[$0] == "01FF" }
        let program = try #require(MakeCodeProgram.find(in: Self.new, family: Self.family))
        let plan = try BlockPlan(
            image: Self.new, program: program,
            boardRegion: RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: [UInt8](repeating: 0, count: 8)),
            family: Self.family, sealProgramHash: true)
        let last = plan.blockCount - 1
        for (lost, resent) in [(69, plan.blocks[69].address), (last, plan.blocks[0].address)] {
            var faults = FaultPlan(seed: 1)
            faults.dropNotificationAt = [acks[lost]]
            let run = try Self.flash(faults)
            #expect(run.faults.droppedNotifications == 1)
            guard case let .success(.flashed(stats)) = run.outcome else {
                Issue.record("block \(lost + 1): \(run.outcome)")
                continue
            }
            #expect(stats.verified && stats.resyncs == 1 && stats.reconnects == 0, "block \(lost + 1): \(stats)")
            let fence = try #require(run.writes.firstIndex(of: "command FF00"))
            // After the restart: the check (a packet and STATUS), the barrier, the step (packet
            // 128, which the board answers 01 AA), then the block from packet 4.
            let barrier = try #require(run.writes[fence...].firstIndex(of: "command 0002"))
            let packets = run.writes[barrier...].filter { $0.hasPrefix("command 01") }.prefix(2)
            #expect(packets.first?.hasPrefix("command 01000080") == true, "block \(lost + 1): \(packets)")
            // The block's first packet: the low half-word of the address, then packet number 4.
            let low = String(format: "%04X", resent & 0xFFFF)
            #expect(packets.last?.hasPrefix("command 01\(low)04") == true, "block \(lost + 1): \(packets)")
            #expect(try run.board.readFlash(program.region) == Self.new.read(program.region, fill: 0xFF))
            #expect(run.board.flash.mostWritesPerWord <= 2, "block \(lost + 1)")
        }
    }

    @Test func aDropBeforeTheRestartCountsAsADropAndTheBoardIsFencedAgain() throws {
        // The link drops at block 16's first packet; the writer hears of it only after the
        // supervision timeout, when its fence (FF 00) has gone to the dead link. On the next
        // connection the board, which never restarted, drops the check's packet and answers
        // STATUS: the loss counts as a drop, and FF 00 goes again, to a live board this time.
        var faults = FaultPlan(seed: 1)
        faults.disconnectAtWrite = [60]
        let run = try Self.flash(faults)
        guard case let .success(.flashed(stats)) = run.outcome else {
            Issue.record("\(run.outcome)")
            return
        }
        #expect(stats.verified && stats.reconnects == 1, "\(stats)")
        // The check after the drop: its STATUS is answered first, and FF 00 follows at once.
        let fence = try #require(run.writes.firstIndex(of: "command FF00"))
        let check = try #require(run.writes[fence...].firstIndex(of: "command EE"))
        #expect(
            run.writes[check...].prefix(2) == ["command EE", "command FF00"],
            "fenced again after the check: \(run.writes[(fence - 2)...].prefix(12))")
        let program = try #require(MakeCodeProgram.find(in: Self.new, family: Self.family))
        #expect(try run.board.readFlash(program.region) == Self.new.read(program.region, fill: 0xFF))
        #expect(run.board.flash.mostWritesPerWord <= 2)
    }

    @Test func fourDropsGiveUpAtTheFourthAsWithoutTheFence() throws {
        // Each drop is heard while the fence waits for the restart; each counts all the same.
        var faults = FaultPlan(seed: 1)
        faults.disconnectAtWrite = [60, 120, 180, 240]
        let run = try Self.flash(faults)
        guard case let .failure(error) = run.outcome,
            case let .tooManyLinkLosses(count, _)? = error as? PartialFlashError
        else {
            Issue.record("\(run.outcome)")
            return
        }
        #expect(count == 4)
    }

    @Test func aBoardWhoseFlashWorkHangsIsNotRestartedByTheFenceAndTheWriterGivesUpForTheReset() throws {
        var faults = FaultPlan(seed: 1)
        faults.flashOperationErrorAt = [3]
        let run = try Self.flash(faults)
        guard case let .failure(error) = run.outcome, case .rebootNotObserved? = error as? PartialFlashError else {
            Issue.record("\(run.outcome)")
            return
        }
        // FF 00 twice, waiting behind the hung work; nothing else is written to the hung board.
        let fence = try #require(run.writes.firstIndex(of: "command FF00"))
        #expect(run.writes[fence...] == ["command FF00", "command FF00"])
        #expect(run.board.flashWorkHangs, "only FF 01 (the session's `BoardReset`) resets it")
    }
}
