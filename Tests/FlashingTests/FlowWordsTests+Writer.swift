import PartialFlashing
import Testing
import Transport
@testable import Flashing

/// The words of `PartialFlashWriterReport`, every case, as the command line shows them.
extension FlowWordsTests {
    static let writer: [PartialFlashWriterReport] = [
        .writing(blocks: 63, bytes: 4032, pages: 2), .rewritingOnePage(address: 0x48000, blocks: 16),
        .continuingWrite(block: 64, of: 130, address: 0x48000),
        .sendingBlock(block: 2, of: 63, address: 0x47080, firstPacket: 8),
        .sent([0x01, 0x70, 0x80], .again), .sent([0x00, 0x02], .resynchronise), .sent([0x02], .endOfTransmission),
        .sent([0xFF, 0x00], .fence), .sent([0x01, 0x00, 0x00, 0x80], .step(expects: 4)),
        .sent([0x01, 0x00, 0x00, 0x07], .restartProbe(aaMeansRestart: true)),
        .sent([0x01, 0x00, 0x00, 0xF9], .restartProbe(aaMeansRestart: false)), .sent([0xEE], .statusAfterProbe),
        .answerAfterLastBlock, .barrierBeforeHash,
        .rewinding(block: 64, address: 0x48000, .pageOpener, inDoubt: 66, writes: 3),
        .rewinding(block: 0, address: 0x47000, .wholeProgram, inDoubt: 128, writes: 3),
        .lateAnswer(block: 0, written: true), .lateAnswer(block: 4, written: false), .droppedAfterFence(dropped),
        .droppedAfterEnd(.remoteTerminated), .connectedAfterFence,
        .reconnectedResuming(block: 0, address: 0x47000, .pageOpener, inDoubt: 2), .fenceFirst,
        .restarted(.expectsPacketZero), .restarted(.statusFirst), .notRestarted(.noProbe(group: 252)),
        .notRestarted(.hasPackets(group: 0)), .notRestarted(.lateAnswer), .notRestarted(.statusFirst),
        .notRestarted(.noAnswer(waited: .seconds(2))),
        .fillingIn(block: 2, address: 0x47080, .noAcknowledgement(.seconds(1)), firstPacket: 8),
        .fencing(block: 2, address: 0x47080, .writeFailed(.notConnected(operation: "write"))),
        .outOfOrderAgain(block: 1, address: 0x47040), .outOfOrder(block: 62, address: 0x47F80, firstPacket: 0),
        .fenceAgain, .endAgain, .stepUnanswered, .linkDropped(dropped), .droppedBeforeRestart(.remoteTerminated)
    ]

    static let writerWords = """
        note: writing 63 blocks (4032 bytes, 2 pages)
        note: rewriting the page at 0x00048000 as it is (16 blocks), then END_OF_TRANSMISSION, to clear the mark of an unfinished flash
        note: continuing the unfinished write at block 65 of 130 (0x00048000): 64 blocks were written before
        trace: block 3/63 at 0x00047080, packets 8-11
        trace: → 01 70 80 (again)
        trace: → 00 02 (resynchronise packet numbers)
        trace: → 02 (end of transmission)
        trace: → FF 00 (restart once every pending flash event ran)
        trace: → 01 00 00 80 (out of order on purpose: the board answers 01 AA and expects 4, away from the numbers a restart leaves)
        trace: → 01 00 00 07 (did the board restart? 01 AA if it did)
        trace: → 01 00 00 F9 (did the board restart? 01 AA if it did not)
        trace: → EE (its answer comes after any 01 AA)
        trace: unexpected answer after the last block: a block may have been skipped
        trace: every block but the program hash is written: a barrier first
        trace: resuming at block 65 (0x00048000): the first block of its page, for block 67, whose words may be written 3 times otherwise
        trace: resuming at block 1 (0x00047000): the whole program, as the program hash may be written already, for block 129, whose words may be written 3 times otherwise
        trace: the late answer to block 1: written; its page is written again after the restart all the same
        trace: the late answer to block 5: dropped (01 AA); its page is written again after the restart all the same
        trace: the link dropped after FF 00 (\(dropped)): the restart, or a drop before it; checking
        trace: the link dropped after END_OF_TRANSMISSION: \(DisconnectReason.remoteTerminated)
        trace: connected again after FF 00
        trace: connected again; resuming at block 1 (0x00047000): the first block of its page, for block 3
        trace: the block in flight may still be pending on the board: the fence first
        trace: the board expects packet 0: it restarted, as FF 00 asked
        trace: STATUS answered with no 01 AA before it: the board restarted, or has none of the block
        trace: the board did not restart: no check can tell for packets numbered from 252
        trace: the board did not restart: it has packets of the block numbered from 0 (01 AA to packet 249)
        trace: the board did not restart: the block's late answer came on the new connection
        trace: the board did not restart: STATUS answered with no 01 AA before it
        trace: the board did not restart: no answer to the check within 2 s
        retry: block 3 at 0x00047080: no acknowledgement within 1 s; sending its packets 8-11 again (the board ignores those it has)
        retry: block 3 at 0x00047080: a write failed: \(TransportError.notConnected(operation: "write")); restarting the board behind its pending work (FF 00) and going on from its page on a fresh connection
        retry: block 2 at 0x00047040: out of order again; restarting the board behind its pending work (FF 00) and going on from its page on a fresh connection
        retry: block 63 at 0x00047F80: packet out of order; resending as packets 0-3
        retry: the board did not restart after FF 00; sending it again
        retry: the board did not restart after 02; sending it again
        retry: no 01 AA to the out-of-order packet; resynchronising with REGION_INFO 2
        retry: the link dropped (\(dropped)); connecting again
        retry: the link dropped (\(DisconnectReason.remoteTerminated)) before the board could restart for FF 00; connecting again (counted as a reconnection)
        """

    @Test("Every partial-flash writer report is worded as the command line shows it")
    func partialFlashWriterWords() {
        #expect(Self.lines(Self.writer.map { AnyFlowReport($0) }) == Self.writerWords)
    }
}
