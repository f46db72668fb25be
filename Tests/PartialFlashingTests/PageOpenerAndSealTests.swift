import FirmwareImage
import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing

/// The answers to a page-opening block are held until the board's erase can have finished, and
/// once the program hash may be written no page is erased again before the hash's page.
@Suite struct PageOpenerAndSealTests {
    let hold = PartialFlashTimer.pageOpenerHold
    let settings = PartialFlashSettings(rejectSimultaneousAnswers: true, minimumAnswerDelay: .milliseconds(10))

    /// A writer whose first block (a page opener) went out at 0 with a 100 ms hold.
    func holdingWriter(bodySize: Int = 9000, seal: Bool = false) throws -> PartialFlashWriter {
        let (plan, program) = try makePlan(bodySize: bodySize, seal: seal)
        var writer = PartialFlashWriter(plan: plan, program: program, settings: settings)
        writer.pageOpenerHold = .milliseconds(100)
        _ = writer.beginAfterRegionInfo()
        return writer
    }

    /// The address in the first FLASH_DATA packet of `actions`.
    func firstAddress(_ actions: [FlowAction]) -> UInt32? {
        guard let p0 = writes(actions).first(where: { $0.first == 0x01 }),
              let p1 = writes(actions).dropFirst().first(where: { $0.first == 0x01 }) else { return nil }
        return UInt32(p0[1]) << 8 | UInt32(p0[2]) | UInt32(p1[1]) << 24 | UInt32(p1[2]) << 16
    }

    @Test func aLateCopyDuringThePageEraseIsHeldAndTheBoardsOwnAnswerStandsForTheBlock() throws {
        var writer = try holdingWriter()
        // A late copy of the answer before arrives 15 ms after the page opener went out.
        let copy = writer.handle(ack, now: .milliseconds(15))
        #expect(writes(copy).isEmpty, "the next block waits for the erase")
        #expect(effects(copy) == [.startTimer(hold, .milliseconds(85))])
        // The board's own answer comes after the erase, still inside the hold.
        let own = writer.handle(ack, now: .milliseconds(95))
        #expect(writes(own).isEmpty)
        #expect(writer.heldCopies == 1)
        let next = writer.handle(.timerFired(hold), now: .milliseconds(100))
        #expect(packetNumbers(next) == [4, 5, 6, 7])
        #expect(firstAddress(next) == 0x47040)
        #expect(reports(next).contains(.progress(done: 1, total: writer.plan.blockCount, unit: .blocks)))
    }

    @Test func aLoneEarlyAnswerFromABoardThatSkippedTheEraseIsTakenWhenTheHoldEnds() throws {
        var writer = try holdingWriter()
        #expect(writes(writer.handle(ack, now: .milliseconds(30))).isEmpty)
        let next = writer.handle(.timerFired(hold), now: .milliseconds(100))
        #expect(packetNumbers(next) == [4, 5, 6, 7])
        #expect(writer.heldCopies == 0)
    }

    @Test func anAnswerAfterTheHoldIsTakenAtOnceAndBlocksInsideAPageAreNotHeld() throws {
        var writer = try holdingWriter()
        let opener = writer.handle(ack, now: .milliseconds(120))
        #expect(packetNumbers(opener) == [4, 5, 6, 7])
        let inside = writer.handle(ack, now: .milliseconds(150))
        #expect(packetNumbers(inside) == [8, 9, 10, 11], "block 2 does not open a page")
    }

    @Test func aHeldOutOfOrderAnswerMakesTheOpenerGoAgainAfterTheHold() throws {
        var writer = try holdingWriter()
        _ = writer.handle(outOfOrder, now: .milliseconds(40))
        let again = writer.handle(.timerFired(hold), now: .milliseconds(100))
        #expect(packetNumbers(again) == [4, 5, 6, 7])
        #expect(firstAddress(again) == 0x47000, "the page opener is resent")
    }

    @Test func aLostLinkDropsWhatWasHeld() throws {
        var writer = try holdingWriter()
        _ = writer.handle(ack, now: .milliseconds(30))
        let lost = writer.handle(.disconnected(.supervisionTimeout), now: .milliseconds(50))
        #expect(effects(lost).contains(.cancelTimer(hold)))
        #expect(writer.handle(.timerFired(hold), now: .milliseconds(100)).isEmpty)
    }

    @Test func theFlowHoldsPageOpenersForTheBoardsEraseTimeAndOneInterval() {
        #expect(ChipFamily.nrf52833.pageOpenerHold(connectionInterval: .milliseconds(15)) == .milliseconds(101))
        #expect(ChipFamily.nrf51.pageOpenerHold(connectionInterval: .microseconds(7_500)) == .microseconds(30_800))
    }

    @Test func anAnswerToABlockSentBetweenConnectionEventsIsTakenAfterOneInterval() throws {
        // After a held answer the next block goes out at the hold's end, which may be just
        // before a connection event: its answer can come just over one interval later.
        let (plan, program) = try makePlan(bodySize: 9000)
        var writer = PartialFlashWriter(plan: plan, program: program,
                                        settings: PartialFlashSettings(rejectSimultaneousAnswers: true,
                                                                       minimumAnswerDelay: .milliseconds(45)))
        writer.pageOpenerHold = .milliseconds(116)
        writer.connectionInterval = .milliseconds(30)
        _ = writer.beginAfterRegionInfo()
        _ = writer.handle(ack, now: .milliseconds(60))
        #expect(packetNumbers(writer.handle(.timerFired(hold), now: .milliseconds(116))) == [4, 5, 6, 7])
        let own = writer.handle(ack, now: .milliseconds(150))        // 34 ms later
        #expect(packetNumbers(own) == [8, 9, 10, 11])
        // A block sent right after an answer keeps the 1.5-interval floor.
        let early = writer.handle(ack, now: .milliseconds(184))      // 34 ms after block 3
        #expect(writes(early).isEmpty)
    }

    @Test func afterTheHashBlockWentOutAReconnectSendsOnlyThatBlockAgain() throws {
        let (plan, program) = try makePlan(bodySize: 9000, seal: true)
        let seal = try #require(plan.sealIndex)
        var writer = PartialFlashWriter(plan: plan, program: program)
        _ = writer.beginAfterRegionInfo()
        _ = writer.run(Array(repeating: ack, count: seal))            // every block but the hash block
        #expect(writer.index == seal && writer.sealSent)
        _ = writer.handle(.disconnected(.supervisionTimeout), now: .seconds(5))
        _ = writer.handle(.connected(link), now: .seconds(6))
        let resumed = writer.handle(region(2, 0x47000, 0x73000, oldProgramHash), now: .seconds(6))
        #expect(firstAddress(resumed) == plan.blocks[seal].address)
        #expect(writer.index == seal)
    }

    @Test func aDoubtAfterTheHashBlockWentOutRewritesFromTheFirstBlock() throws {
        // The last page's answer was a late copy (an early answer while the hash block was in
        // flight shows it): that page must be written again, but the board may report the new
        // program already, so the hash's page (the first) goes first.
        let (plan, program) = try makePlan(bodySize: 9000, seal: true)
        let seal = try #require(plan.sealIndex)
        var writer = PartialFlashWriter(plan: plan, program: program, settings: settings)
        _ = writer.beginAfterRegionInfo()
        var t = Duration.zero
        for _ in 0..<seal { t += .milliseconds(30); _ = writer.handle(ack, now: t) }
        #expect(writer.sealSent)
        _ = writer.handle(ack, now: t + .milliseconds(5))             // too early for the hash block
        let again = writer.handle(ack, now: t + .milliseconds(30))
        #expect(firstAddress(again) == plan.blocks[0].address)
        #expect(reports(again).contains { if case let .retry(text) = $0 { return text.contains("the whole program") } else { return false } })
        #expect(writer.sealSent, "until the first block is acknowledged")
        _ = writer.handle(ack, now: t + .milliseconds(60))
        #expect(!writer.sealSent && writer.index == 1)
    }

    @Test func withoutTheHashBlockSentADoubtRewritesOnlyThePageBefore() throws {
        let (plan, program) = try makePlan(bodySize: 9000, seal: true)
        var writer = PartialFlashWriter(plan: plan, program: program, settings: settings)
        _ = writer.beginAfterRegionInfo()
        var t = Duration.zero
        for _ in 0..<70 { t += .milliseconds(30); _ = writer.handle(ack, now: t) }
        _ = writer.handle(ack, now: t + .milliseconds(5))
        let again = writer.handle(ack, now: t + .milliseconds(30))
        #expect(firstAddress(again) == 0x48000, "block 70's page opens at 0x48000")
    }
}
