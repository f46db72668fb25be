import FirmwareImage
import Testing
@testable import SimulatedBoard

/// MCUboot checks an upgrade image's SHA-256 before it swaps it in; a corrupted upload that
/// was marked for test is erased instead, and the board keeps running its old image.
@Suite struct MCUbootValidationTests {
    static func board(withPending image: [UInt8], over old: [UInt8]) throws -> SimulatedBoard {
        var board = try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old)
        let i = try #require(board.services.firstIndex { $0 is SMPServer })
        var server = try #require(board.services[i] as? SMPServer)
        server.secondary.replaceSubrange(0..<image.count, with: image)
        server.pendingTest = true
        board.services[i] = server
        return board
    }

    @Test func corruptedPendingImageIsErasedAndTheOldImageKeepsRunning() throws {
        let (old, new) = try SMPFixture.images(magicAt: 0x20000, programLength: 0x1800)
        var corrupted = new.bytes
        corrupted[0x1000 + 0x200] ^= 0x01
        var board = try Self.board(withPending: corrupted, over: old.bytes)
        let slot = try #require(board.smpServer).configuration.primarySlot
        let before = try board.readFlash(slot)
        board.reset()
        #expect(board.smpServer?.statistics.rejectedImages == 1)
        #expect(board.smpServer?.statistics.swaps == 0)
        #expect(try board.readFlash(slot) == before)
        #expect(board.smpServer?.secondary.allSatisfy { $0 == 0xFF } == true)
    }

    @Test func intactPendingImageIsSwappedIn() throws {
        let (old, new) = try SMPFixture.images(magicAt: 0x20000, programLength: 0x1800)
        var board = try Self.board(withPending: new.bytes, over: old.bytes)
        let slot = try #require(board.smpServer).configuration.primarySlot
        board.reset()
        #expect(board.smpServer?.statistics.swaps == 1)
        #expect(try board.readFlash(slot.lowerBound..<(slot.lowerBound + UInt32(new.bytes.count))) == new.bytes)
    }
}
