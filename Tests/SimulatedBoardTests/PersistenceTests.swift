import FirmwareImage
import Foundation
import PartialFlashing
import Testing
@testable import SimulatedBoard

@Suite struct PersistenceTests {
    @Test func savedBoardComesBackWithFlashModeAndFlags() throws {
        let image = Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 5000)
        var bench = Bench(
            try SimulatedBoard(
                profile: BoardProfile(board: .calliopeMini3, name: "Calliope mini [tepuz]"),
                image: image, mode: .pairing))
        bench.write([0x00, 0x02])
        bench.block(0x60000, Fixture.pattern(64, seed: 4), first: 0)  // sets flashIncomplete
        let board = bench.board
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bitflash-sim-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        try board.save(to: url)
        let loaded = try SimulatedBoard.load(from: url)
        #expect(loaded.profile == board.profile)
        #expect(loaded.mode == .pairing && loaded.flashIncomplete)
        #expect(loaded.memoryMap == board.memoryMap)
        #expect(loaded.flash.nonBlankPages == board.flash.nonBlankPages)
        for page in board.flash.nonBlankPages {
            #expect(try loaded.readFlash(page..<(page + 4096)) == board.readFlash(page..<(page + 4096)))
        }
        // A loaded board keeps booting into pairing mode until a flash completes.
        var again = loaded
        again.reset()
        #expect(again.mode == .pairing)
    }

    @Test func storesOnlyNonBlankPages() throws {
        var image = MemoryImage()
        try image.write([1, 2, 3, 4], at: 0x1C000)
        let small = try SimulatedBoard(profile: BoardProfile(board: .microbitV2), image: image).encoded()
        // One 4 KiB page in base64 plus the profile: far below the 512 KiB of the chip.
        #expect(small.count < 8_000)
        let full = try SimulatedBoard(
            profile: BoardProfile(board: .microbitV2),
            image: Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 4096)
        ).encoded()
        #expect(full.count > 150_000 * 4 / 3)
    }

    @Test func rejectsFilesThatAreNotSavedBoards() throws {
        #expect(throws: SimulatedBoardError.self) { try SimulatedBoard(encoded: Data("{\"format\":1}".utf8)) }
        #expect(throws: SimulatedBoardError.self) { try SimulatedBoard(encoded: Data([0xFF, 0x00])) }
        let good = try SimulatedBoard(profile: BoardProfile(board: .microbitV1)).encoded()
        var text = String(decoding: good, as: UTF8.self)
        text = text.replacingOccurrences(of: "\"version\":1", with: "\"version\":9")
        #expect(throws: SimulatedBoardError.self) { try SimulatedBoard(encoded: Data(text.utf8)) }
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
            "no-such-board-\(UUID().uuidString).json")
        #expect(throws: SimulatedBoardError.self) { try SimulatedBoard.load(from: missing) }
    }
}
