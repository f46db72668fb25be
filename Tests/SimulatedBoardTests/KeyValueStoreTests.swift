import FirmwareImage
import Foundation
import LinkModel
import McuMgr
import NordicDFU
import PartialFlashing
import Testing
import Transport
@testable import SimulatedBoard

/// The runtime's key-value page, byte for byte, and what survives it: `flashIncomplete` stays
/// through resets, Nordic DFU and MCUboot swaps until an END_OF_TRANSMISSION completes
/// (docs/protocols/board-storage.md §2-§6).
@Suite struct KeyValueStoreTests {
    static let v2 = Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 6000)
    static let v1 = Fixture.image(family: .nrf51, magicAt: 0x30000, programLength: 3000)

    func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    @Test func codalKeepsFlashIncompleteAsAPairInItsPageBelowTheBootloader() throws {
        var b = try Bench(family: .nrf52833, image: Self.v2)
        b.write([0x00, 0x02])
        b.block(0x47000, Fixture.pattern(64, seed: 9), first: 0)
        let page = try b.board.readFlash(0x74000..<0x75000)
        #expect(le32(page, 0) == 0xC0DA1 && le32(page, 4) == 1)
        #expect(Array(page[8..<24]) == Array("flashIncomplete".utf8) + [0])
        #expect(page[24] == 0x01 && page[25..<56].allSatisfy { $0 == 0 })
        // CODAL writes its 256-byte RAM scratch: zeros after the pair, erased flash after that.
        #expect(page[56..<256].allSatisfy { $0 == 0 } && page[256...].allSatisfy { $0 == 0xFF })
        // The runtime's own page writes are not writes the client asked for.
        #expect(b.board.flash.writesStay(inside: 0x47000..<0x73000))
        #expect(b.board.flash.storageOperations > 0)

        b.write([0x02])
        b.settle()
        let after = try b.board.readFlash(0x74000..<0x74040)
        #expect(le32(after, 0) == 0xC0DA1 && le32(after, 4) == 0)
        #expect(!b.board.flashIncomplete && b.board.mode == .application)
    }

    @Test func dalKeepsItsStoreAt0x3BC00AndCopiesThroughTheScratchPage() throws {
        var b = try Bench(family: .nrf51, image: Self.v1)
        b.write([0x00, 0x02])
        b.block(0x30000, Fixture.pattern(64, seed: 9), first: 0)
        let store = try b.board.readFlash(0x3BC00..<0x3BC40)
        let scratch = try b.board.readFlash(0x3B400..<0x3B440)
        #expect(le32(store, 0) == 0xCAFE && le32(store, 4) == 1)
        #expect(Array(store[8..<24]) == Array("flashIncomplete".utf8) + [0] && store[24] == 0x01)
        #expect(scratch == store)
        #expect(try b.board.readFlash(0x3BC38..<0x3C000).allSatisfy { $0 == 0xFF })
    }

    @Test func aFullCODALStoreRefusesFlashIncompleteSilently() throws {
        var b = try Bench(family: .nrf52833, image: Self.v2)
        for k in 0..<5 {
            let stored = b.board.device.putKey("user\(k)", [UInt8(k)])
            #expect(stored)
        }
        let sixth = b.board.device.putKey("sixth", [6])
        #expect(!sixth)
        b.write([0x00, 0x02])
        b.block(0x47000, Fixture.pattern(64, seed: 9), first: 0)
        #expect(!b.board.flashIncomplete)
        b.board.reset()
        #expect(b.board.mode == .application)
    }

    @Test func rebootModeIsConsumedByOneBootAndFlashIncompleteByNone() throws {
        var board = try SimulatedBoard(.microbitV2, image: Self.v2)
        board.device.putKey(StorageKey.rebootMode, [0, 0, 0, 0])
        #expect(board.bootDecisionTime == .milliseconds(20))
        board.reset()
        #expect(board.mode == .pairing && board.device.storage[StorageKey.rebootMode] == nil)
        board.reset()
        #expect(board.mode == .application && board.bootDecisionTime == .zero)
        board.device.putKey(StorageKey.flashIncomplete, [1])
        #expect(board.bootDecisionTime == .milliseconds(500))
        for _ in 0..<3 {
            board.reset()
            #expect(board.mode == .pairing && board.flashIncomplete)
        }
        var calliope = try SimulatedBoard(.calliopeMini2, image: Self.v1)
        calliope.device.putKey(StorageKey.flashIncomplete, [1])
        #expect(calliope.bootDecisionTime == .milliseconds(1250))
    }

    @Test func flashIncompleteSurvivesASecureDFUAndTheNewProgramBootsIntoPairingMode() throws {
        var board = try SimulatedBoard(profile: SimulatedBoard.stockProfile(.microbitV2), image: Self.v2)
        board.device.putKey(StorageKey.flashIncomplete, [1])
        board.reset()
        let new = Fixture.image(
            family: .nrf52833, magicAt: 0x47000, programLength: 9000, seed: 5,
            programHash: [1, 2, 3, 4, 5, 6, 7, 8])
        var sim = Simulation(link: .deviceRequested, faults: .none)
        let id = sim.addBoard(board)
        let run = sim.run(NordicDFUFlow(image: new, family: .nrf52833), on: id, deadline: .seconds(300))
        #expect((try? run.outcome.get())?.verified == true)
        var after = try sim.board(id)
        #expect(after.flashIncomplete && after.mode == .pairing)
        #expect(after.memoryMap[2].hash == [1, 2, 3, 4, 5, 6, 7, 8])
        after.reset()
        #expect(after.mode == .pairing)
    }

    @Test func flashIncompleteSurvivesALegacyDFUWhoseImageEndsBelowTheStore() throws {
        var board = try SimulatedBoard(profile: SimulatedBoard.stockProfile(.microbitV1), image: Self.v1)
        board.device.putKey(StorageKey.flashIncomplete, [1])
        board.reset()
        let new = Fixture.image(
            family: .nrf51, magicAt: 0x30000, programLength: 5000, seed: 5,
            programHash: [8, 7, 6, 5, 4, 3, 2, 1])
        var sim = Simulation(link: .deviceRequested, faults: .none)
        let id = sim.addBoard(board)
        let run = sim.run(NordicDFUFlow(image: new, family: .nrf51), on: id, deadline: .seconds(300))
        #expect((try? run.outcome.get())?.verified == true)
        let after = try sim.board(id)
        #expect(after.flashIncomplete && after.mode == .pairing)
        #expect(after.memoryMap[2].hash == [8, 7, 6, 5, 4, 3, 2, 1])
    }

    @Test func flashIncompleteSurvivesAnMCUbootSwap() throws {
        let (old, new) = try SMPFixture.images()
        var board = try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes)
        board.device.putKey(StorageKey.flashIncomplete, [1])
        board.reset()
        var sim = Simulation(link: .deviceRequested, faults: .none)
        let id = sim.addBoard(board)
        let run = sim.run(
            McuMgrUpgrade(image: SMPFixture.upgrade(new), options: SMPFixture.options(fast: true)),
            on: id, deadline: .seconds(300))
        #expect((try? run.outcome.get()) != nil)
        let after = try sim.board(id)
        #expect(after.smpServer?.statistics.swaps == 1)
        #expect(after.flashIncomplete && after.mode == .pairing)
    }

    @Test func savedBoardsKeepTheStoreInFlashAndOldFilesGetTheirKeysWritten() throws {
        var board = try SimulatedBoard(.microbitV2, image: Self.v2)
        board.device.putKey(StorageKey.flashIncomplete, [1])
        let loaded = try SimulatedBoard(encoded: board.encoded())
        #expect(loaded.flashIncomplete)
        #expect(try loaded.readFlash(0x74000..<0x75000) == board.readFlash(0x74000..<0x75000))
        // A file from before the store lived in flash: keys listed, page blank.
        let old = try SimulatedBoard(.microbitV2, image: Self.v2)
        var text = String(decoding: try old.encoded(), as: UTF8.self)
        text = text.replacingOccurrences(of: "\"storage\":{}", with: "\"storage\":{\"flashIncomplete\":\"AQ==\"}")
        let upgraded = try SimulatedBoard(encoded: Data(text.utf8))
        #expect(upgraded.flashIncomplete)
    }
}
