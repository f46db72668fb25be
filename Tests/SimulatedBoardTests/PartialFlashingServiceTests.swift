import FirmwareImage
import PartialFlashing
import Testing
@testable import SimulatedBoard

/// The device state machine, case by case (docs/protocols/partial-flashing.md §3.2-§3.5).
@Suite struct PartialFlashingServiceTests {
    static let ok: [UInt8] = [0x01, 0xFF]
    static let fail: [UInt8] = [0x01, 0xAA]
    let base: UInt32 = 0x50000
    let data0 = Fixture.pattern(64, seed: 1), data1 = Fixture.pattern(64, seed: 2), data2 = Fixture.pattern(64, seed: 5)

    /// A V2 bench that has written blocks 0..3 and 4..7, so the next block is numbered 8..11.
    func benchAtPacket8() throws -> Bench {
        var bench = try Bench(family: .nrf52833)
        bench.write([0x00, 0x02])
        bench.block(base, data0, first: 0)
        bench.block(base + 64, data1, first: 4)
        _ = bench.take()
        return bench
    }

    func p(_ i: Int, _ data: [UInt8], number: UInt8, at address: UInt32) -> [UInt8] {
        Fixture.packets(address: address, data: data, first: number &- UInt8(i))[i]
    }

    @Test func lostPacket10GivesOneFailAndAcceptsTheBlockResentAt12() throws {
        var b = try benchAtPacket8()
        let a = base + 128
        b.write(p(0, data2, number: 8, at: a))
        b.write(p(1, data2, number: 9, at: a))
        b.write(p(3, data2, number: 11, at: a))
        #expect(b.take() == [Self.fail])
        #expect(b.board.services.first.flatMap { ($0 as? PartialFlashingService)?.packetCount } == 12)
        b.block(a, data2, first: 12)
        #expect(b.take() == [Self.ok])
        #expect(try b.board.readFlash(a..<(a + 64)) == data2)
    }

    @Test func lostPacket9GivesOneFailThenIgnoresPacket11() throws {
        var b = try benchAtPacket8()
        let a = base + 128
        b.write(p(0, data2, number: 8, at: a))
        b.write(p(2, data2, number: 10, at: a))
        b.write(p(3, data2, number: 11, at: a))
        b.settle()
        #expect(b.take() == [Self.fail])
        b.block(a, data2, first: 12)
        #expect(b.take() == [Self.ok])
        #expect(try b.board.readFlash(a..<(a + 64)) == data2)
    }

    @Test func lostFourthPacketGetsNoAnswer() throws {
        var b = try benchAtPacket8()
        for i in 0..<3 { b.write(p(i, data2, number: UInt8(8 + i), at: base + 128)) }
        b.settle()
        #expect(b.take().isEmpty)
    }

    @Test func lostFourthPacketResentAtPlus4GivesTwoFailsAndNoWrite() throws {
        var b = try benchAtPacket8()
        let a = base + 128
        for i in 0..<3 { b.write(p(i, data2, number: UInt8(8 + i), at: a)) }
        b.block(a, data2, first: 12)
        // 12 is ahead (fail, now 12), 13 is ahead again (fail, now 16), 14 and 15 are behind.
        #expect(b.take() == [Self.fail, Self.fail])
        #expect(try b.board.readFlash(a..<(a + 64)).allSatisfy { $0 == 0xFF })
    }

    @Test func lostFourthPacketResentWithSameNumbersCompletesTheBlock() throws {
        var b = try benchAtPacket8()
        let a = base + 128
        for i in 0..<3 { b.write(p(i, data2, number: UInt8(8 + i), at: a)) }
        b.block(a, data2, first: 8)
        #expect(b.take() == [Self.ok])
        #expect(try b.board.readFlash(a..<(a + 64)) == data2)
    }

    @Test func afterAFailTheBoardExpectsTheNextBlockStart() throws {
        var b = try benchAtPacket8()
        b.write(p(0, data2, number: 9, at: base + 128))  // ahead: fail, expects 12
        #expect(b.take() == [Self.fail])
        b.block(base + 128, data2, first: 8)  // 8..11 are 4..1 behind: ignored
        #expect(b.take().isEmpty)
        b.block(base + 128, data2, first: 12)
        #expect(b.take() == [Self.ok])
    }

    @Test func packetNumbersWrapAroundAt256() throws {
        var b = try Bench(family: .nrf52833)
        b.write([0x00, 0x02])
        _ = b.take()
        for k in 0..<65 { b.block(base + UInt32(k % 60) * 64, data0, first: UInt8(truncatingIfNeeded: 4 * k)) }
        // 65 blocks: numbers 0…259 wrap; every block was accepted.
        #expect(b.take() == Array(repeating: Self.ok, count: 65))
    }

    @Test func regionInfoResetsThePacketCounters() throws {
        var b = try benchAtPacket8()
        b.write([0x00, 0x01])
        _ = b.take()
        b.block(base + 128, data2, first: 0)
        #expect(b.take() == [Self.ok])
    }

    @Test func codalErasesOnlyNonBlankPagesAtAPageStart() throws {
        var image = MemoryImage()
        try image.write([UInt8](repeating: 0x00, count: 8192), at: 0x60000)
        var b = try Bench(family: .nrf52833, image: image)
        b.write([0x00, 0x02])
        _ = b.take()
        b.block(0x50000, data0, first: 0)  // blank page: no erase
        #expect(b.board.flash.eraseCount == 0)
        b.block(0x60000, data1, first: 4)  // page start over old data: erased first
        #expect(b.board.flash.eraseLog == [0x60000])
        #expect(try b.board.readFlash(0x60000..<0x60040) == data1)
        #expect(try b.board.readFlash(0x60040..<0x61000).allSatisfy { $0 == 0xFF })
        b.block(0x61040, data2, first: 8)  // mid-page, never opened: corrupted
        #expect(b.board.flash.eraseCount == 1)
        #expect(try b.board.readFlash(0x61040..<0x61080) == [UInt8](repeating: 0, count: 64))
        #expect(b.take() == [Self.ok, Self.ok, Self.ok])
    }

    @Test func dalAlwaysErasesAtAOneKilobytePageStart() throws {
        var b = try Bench(family: .nrf51)
        b.write([0x00, 0x02])
        b.block(0x30000, data0, first: 0)
        b.block(0x30040, data1, first: 4)
        b.block(0x30400, data2, first: 8)
        #expect(b.board.flash.eraseLog == [0x30000, 0x30400])
        #expect(try b.board.readFlash(0x30000..<0x30080) == data0 + data1)
    }

    @Test func pipelinedBlocksCorruptTheFlash() throws {
        var image = MemoryImage()
        try image.write([UInt8](repeating: 0x00, count: 64), at: 0x50000)
        var b = try Bench(family: .nrf52833, image: image)
        b.write([0x00, 0x02])
        _ = b.take()
        // The second block's packets arrive before the first block's flash work ran.
        for pkt in Fixture.packets(address: 0x50000, data: data0, first: 0) { b.write(pkt) }
        for pkt in Fixture.packets(address: 0x50040, data: data1, first: 4) { b.write(pkt) }
        b.settle()
        #expect(b.take() == [Self.ok, Self.ok])
        // Both handlers used the shared buffer and offset as they were when they ran.
        #expect(try b.board.readFlash(0x50000..<0x50040) != data0)
        #expect(try b.board.readFlash(0x50040..<0x50080) == data1)
    }

    @Test func endOfTransmissionBurnsTheBufferAgainClearsTheFlagAndReboots() throws {
        var b = try Bench(family: .nrf52833)
        b.write([0x00, 0x02])
        b.block(0x50000, data0, first: 0)
        #expect(b.board.flashIncomplete)
        let words = b.board.flash.wordWriteCount
        b.write([0x02])
        b.settle()
        #expect(b.board.flash.wordWriteCount == words + 16)
        // The same 64 bytes were burnt twice: once for the block, once for END_OF_TRANSMISSION.
        #expect(b.board.flash.writeLog == [0x50000..<0x50040, 0x50000..<0x50040])
        #expect(!b.board.flashIncomplete && b.reboots == 1 && b.board.mode == .application)
        #expect(try b.board.readFlash(0x50000..<0x50040) == data0)
    }

    @Test func endOfTransmissionWithoutABlockHangsTheFlashWorkInsteadOfWritingAddressZero() throws {
        var b = try Bench(family: .nrf52833)
        b.write([0x00, 0x02])
        b.block(0x50000, data0, first: 0)
        b.write([0x00, 0x02])  // resets offset to 0
        _ = b.take()
        let log = b.board.flash.writeLog
        b.write([0x02])
        b.settle()
        // The SoftDevice refuses the MBR: nothing is written, the board does not restart and
        // keeps flashIncomplete.
        #expect(b.board.flash.writeLog == log)
        #expect(b.reboots == 0 && b.board.flashIncomplete)
        #expect(try b.board.readFlash(0x0..<0x40) != data0)
        try expectHungButAnswering(&b)
    }

    @Test func endOfTransmissionAfterOnePacketHangsInsteadOfWritingTheSoftDevice() throws {
        var b = try Bench(family: .nrf52833)
        b.write([0x00, 0x02])
        b.write(Fixture.packets(address: 0x47040, data: data0, first: 0)[0])  // only the low half arrived
        b.write([0x02])
        b.settle()
        // The buffer would go to 0x00007040, inside the SoftDevice: refused, so nothing is written.
        #expect(b.board.flash.writeLog.isEmpty)
        #expect(b.reboots == 0)
        try expectHungButAnswering(&b)
    }

    @Test func aBlockSentBeforeThePreviousWasWrittenCannotReachTheSoftDevice() throws {
        var b = try Bench(family: .nrf52833)
        b.write([0x00, 0x02])
        _ = b.take()
        // The first block's flash work runs after the next block's first packet set `offset`
        // to its low 16 bits only (0x8040): the SoftDevice refuses that address.
        for pkt in Fixture.packets(address: 0x48000, data: data0, first: 0) { b.write(pkt) }
        b.write(Fixture.packets(address: 0x48040, data: data1, first: 4)[0])
        b.settle()
        #expect(b.board.flash.writeLog.allSatisfy { $0.lowerBound >= 0x1C000 })
        #expect(b.take().isEmpty)  // no 01 FF: the work hangs
        try expectHungButAnswering(&b)
    }

    /// A board whose flash work hangs still answers STATUS and REGION_INFO from the write
    /// handler, never acts on FF 00 (queued behind the hung work), and restarts on FF 01.
    func expectHungButAnswering(_ b: inout Bench) throws {
        _ = b.take()
        b.write([0xEE])
        #expect(b.take() == [[0xEE, 0x01, 0x00]])
        b.write([0xFF, 0x00])
        b.settle()
        #expect(b.reboots == 0)
        b.write([0xFF, 0x01])
        #expect(b.reboots == 1)
        b.write([0x00, 0x02])
        b.block(0x50000, data2, first: 0)
        #expect(b.take().last == Self.ok)  // after the reset, blocks are written again
    }

    @Test func statusReportsVersionAndMode() throws {
        var pairing = try Bench(family: .nrf52833)
        pairing.write([0xEE])
        #expect(pairing.take() == [[0xEE, 0x01, 0x00]])
        var app = try Bench(family: .nrf51, mode: .application)
        app.write([0xEE])
        #expect(app.take() == [[0xEE, 0x01, 0x01]])
    }

    @Test func resetIntoPairingModeUsesTheRebootModeKey() throws {
        var b = try Bench(family: .nrf52833, mode: .application)
        #expect(b.board.mode == .application)
        b.write([0xFF, 0x00])
        b.settle()
        #expect(b.reboots == 1 && b.board.mode == .pairing)
        #expect(b.board.device.storage[StorageKey.rebootMode] == nil)  // consumed by the boot
        b.write([0xFF, 0x01])
        #expect(b.reboots == 2 && b.board.mode == .application)
        b.write([0xFF, 0x07])  // any other byte: ignored
        #expect(b.reboots == 2)
    }

    @Test func flashIncompleteForcesPairingModeUntilAFlashCompletes() throws {
        var b = try Bench(family: .nrf52833, mode: .application)
        b.write([0x00, 0x02])
        b.block(0x50000, data0, first: 0)
        b.write([0xFF, 0x01])
        #expect(b.board.mode == .pairing && b.board.flashIncomplete)
        b.board.reset()
        #expect(b.board.mode == .pairing)
        b.write([0x00, 0x02])
        b.block(0x50000, data0, first: 0)
        b.write([0x02])
        b.settle()
        #expect(b.board.mode == .application && !b.board.flashIncomplete)
    }

    @Test func shortWritesReuseStaleBytesOfTheValueBuffer() throws {
        var b = try Bench(family: .nrf52833)
        b.write([0x00, 0x02])
        _ = b.take()
        b.write([0x00])  // byte 1 is still 0x02 from before
        let answer = b.take()
        #expect(answer.count == 1 && answer.first?[1] == 0x02)
        b.write([UInt8](repeating: 0x01, count: 21))  // longer than the characteristic: refused
        #expect(b.take().isEmpty)
        b.write([])
        #expect(b.take().isEmpty)
    }
}
