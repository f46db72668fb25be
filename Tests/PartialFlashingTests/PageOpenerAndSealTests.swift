import FirmwareImage
import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing

/// Blocks that open a page are answered after the board's erase and are taken like any other
/// answer; a page opener whose answer did not come is sent again only after the fence (`FF 00`,
/// the board's restart behind its pending work, a fresh connection), and before any later block
/// of its page; and once the program hash may be written no page is erased again before the
/// hash's page.
@Suite struct PageOpenerAndSealTests {

    /// The address in the first FLASH_DATA packet of `actions`.
    func firstAddress(_ actions: [FlowAction]) -> UInt32? {
        guard let p0 = writes(actions).first(where: { $0.first == 0x01 }),
            let p1 = writes(actions).dropFirst().first(where: { $0.first == 0x01 })
        else { return nil }
        return UInt32(p0[1]) << 8 | UInt32(p0[2]) | UInt32(p1[1]) << 24 | UInt32(p1[2]) << 16
    }

    @Test func aPageOpenerWithoutAnAnswerGoesAgainOnlyAfterTheFenceAndBeforeAnyLaterBlockOfItsPage() throws {
        let (plan, program) = try makePlan(bodySize: 9000)
        var writer = PartialFlashWriter(plan: plan, program: program, settings: WriterTests.fenceOnly)
        _ = writer.beginAfterRegionInfo()
        _ = writer.run(blockAnswers(64))  // page 0x47000 written; block 65 opens 0x48000, as packets 4-7
        #expect(writer.progress.index == 64 && plan.blocks[64].opensPage)
        let fence = writer.handle(.timerFired(PartialFlashTimer.block), now: .seconds(3))
        #expect(writes(fence) == [[0xFF, 0x00]], "nothing of the page is written before the board restarted")
        // The opener's 01 FF comes after its erase, late, before the restart: nothing is written.
        let late = writer.handle(ack, now: .seconds(3) + .milliseconds(90))
        #expect(writes(late).isEmpty)
        // The check on the next connection: packet 3 (one before the opener's 4), then STATUS.
        let back = writer.run([.disconnected(.remoteTerminated), .connected(link)], at: .seconds(3))
        #expect(packetNumbers(back) == [3] && writes(back).last == [0xEE])
        #expect(writes(writer.handle(outOfOrder, now: .seconds(3))) == [[0x00, 0x02]], "it restarted: the barrier")
        // After the barrier of a reconnection, the step (packet 128, answered 01 AA), then the opener.
        #expect(writes(writer.handle(v2Program, now: .seconds(3))) == [stepPacket(expecting: 0)])
        let again = writer.handle(outOfOrder, now: .seconds(3) + .milliseconds(120))
        #expect(
            firstAddress(again) == 0x48000, "the opener again: its page is erased again, nothing after it was written")
        #expect(packetNumbers(again) == [4, 5, 6, 7])
        let next = writer.handle(ack, now: .seconds(3) + .milliseconds(250))
        #expect(firstAddress(next) == 0x48040)
    }

    @Test func afterTheHashBlockWentOutAReconnectWritesFromTheFirstBlockAgain() throws {
        // The hash block's words may be written twice already (nWRITE): only erasing their page,
        // from the first block, makes them writable again.
        let (plan, program) = try makePlan(bodySize: 9000, seal: true)
        let seal = try #require(plan.sealIndex)
        var writer = PartialFlashWriter(plan: plan, program: program)
        _ = writer.beginAfterRegionInfo()
        _ = writer.run(blockAnswers(seal))  // every block but the hash block
        _ = writer.handle(v2Program, now: .seconds(4))  // the barrier; the hash block goes out
        #expect(writer.progress.index == seal && writer.progress.sealSent)
        _ = writer.handle(.disconnected(.supervisionTimeout), now: .seconds(5))
        // The hash block may still be pending on the board: the fence, then a fresh connection.
        #expect(writes(writer.handle(.connected(link), now: .seconds(6))) == [[0xFF, 0x00]])
        _ = writer.run([.disconnected(.remoteTerminated), .connected(link)], at: .seconds(6))
        // The hash block went as packets 0-3: a restarted board says nothing to packet 249, and
        // STATUS answers first (so would a board that has none of it).
        _ = writer.handle(status(.pairing), now: .seconds(6))
        _ = writer.handle(region(2, 0x47000, 0x73000, oldProgramHash), now: .seconds(6))
        let resumed = writer.handle(outOfOrder, now: .seconds(6))
        #expect(firstAddress(resumed) == plan.blocks[0].address)
        #expect(writer.progress.index == 0)
    }

    @Test func aTimeoutOnTheHashBlockGoesBackToTheFirstBlock() throws {
        let (plan, program) = try makePlan(bodySize: 9000, seal: true)
        let seal = try #require(plan.sealIndex)
        var writer = PartialFlashWriter(plan: plan, program: program, settings: WriterTests.fenceOnly)
        _ = writer.beginAfterRegionInfo()
        _ = writer.run(blockAnswers(seal) + [v2Program])
        _ = writer.run([.timerFired(PartialFlashTimer.block), .disconnected(.remoteTerminated), .connected(link)])
        _ = writer.run([status(.pairing), v2Program])
        let again = writer.handle(outOfOrder, now: .seconds(2))
        #expect(firstAddress(again) == plan.blocks[0].address)
        #expect(firstAddress(writer.handle(ack, now: .seconds(2))) == plan.blocks[1].address)
    }

    @Test func theHashBlockGoesOutOnlyAfterABarrierThatNoAnswerPrecedes() throws {
        let (plan, program) = try makePlan(bodySize: 9000, seal: true)
        let seal = try #require(plan.sealIndex)
        var writer = PartialFlashWriter(plan: plan, program: program)
        _ = writer.beginAfterRegionInfo()
        let last = writer.run(blockAnswers(seal))
        #expect(writes(last).last == [0x00, 0x02], "a barrier, not the hash block")
        #expect(!writer.progress.sealSent)
        let sealed = writer.handle(v2Program, now: .seconds(4))
        #expect(firstAddress(sealed) == plan.blocks[seal].address)
        #expect(packetNumbers(sealed) == [0, 1, 2, 3])
        // Then the last program block, held back so that END_OF_TRANSMISSION re-burns a block
        // written once (the hash block's words were written twice).
        let held = try #require(plan.heldBackIndex)
        #expect(held == seal + 1 && held == plan.blockCount - 1)
        #expect(firstAddress(writer.handle(ack, now: .seconds(4))) == plan.blocks[held].address)
        #expect(writes(writer.handle(ack, now: .seconds(4))) == [[0x02]])
        #expect(writer.stats.resyncs == 0, "a planned barrier, not a recovery")
    }

    @Test func anAnswerTooManyBeforeTheHashBlockStopsTheWriteBeforeTheHashIsWritten() throws {
        // A duplicated answer was taken for a later block's: one answer is still due when every
        // block but the hash block looks acknowledged, and it arrives before the barrier's.
        let (plan, program) = try makePlan(bodySize: 9000, seal: true)
        let seal = try #require(plan.sealIndex)
        var writer = PartialFlashWriter(plan: plan, program: program)
        _ = writer.beginAfterRegionInfo()
        var sent = writer.run(Array(repeating: ack, count: seal))
        sent += writer.handle(ack, now: .seconds(4))
        #expect(writer.partialFlashError == .unaccountedAnswers(count: 1))
        let hashAt = plan.blocks[seal].address
        #expect(
            !writes(sent).contains {
                $0.count == 20 && $0[0] == 0x01 && UInt16($0[1]) << 8 | UInt16($0[2]) == UInt16(hashAt & 0xFFFF)
            })
    }
}
