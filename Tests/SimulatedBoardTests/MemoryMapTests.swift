import FirmwareImage
import PartialFlashing
import PartialFlashingFrames
import Testing
@testable import SimulatedBoard

/// REGION_INFO from the board's own scan of its flash (docs/protocols/partial-flashing.md §2.1).
@Suite struct MemoryMapTests {
    func regionAnswer(_ board: SimulatedBoard, _ id: UInt8) throws -> RegionInfo? {
        var bench = Bench(board)
        bench.write([0x00, id])
        guard let bytes = bench.take().first else { return nil }
        guard case let .regionInfo(r) = try PartialFlashingNotification(bytes: bytes) else { return nil }
        return r
    }

    @Test func codalReportsTheProgramFoundAtAPageBoundary() throws {
        let image = Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 19_840)
        let board = try SimulatedBoard(profile: BoardProfile(board: .microbitV2), image: image)
        let r0 = try #require(try regionAnswer(board, 0))
        let r1 = try #require(try regionAnswer(board, 1))
        let r2 = try #require(try regionAnswer(board, 2))
        #expect(r0 == RegionInfo(id: 0, start: 0, end: 0x1C000, hash: [UInt8](repeating: 0, count: 8)))
        #expect(r1.start == 0x1C000 && r1.end == 0x46128 && r1.hash == Fixture.runtimeHash)
        #expect(r2 == RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: Fixture.programHash))
    }

    @Test func codalReportsZerosWithoutAMagic() throws {
        var image = Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 64)
        try image.write([0x71], at: 0x47000, overwrite: true)  // a "disabled variant" program
        let board = try SimulatedBoard(profile: BoardProfile(board: .calliopeMini3), image: image)
        for id in UInt8(0)...2 {
            #expect(
                try regionAnswer(board, id)
                    == RegionInfo(id: id, start: 0, end: 0, hash: [UInt8](repeating: 0, count: 8)))
        }
    }

    @Test func codalIgnoresAMagicThatIsNotAtAPageBoundary() throws {
        var image = Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 64)
        try image.write([UInt8](repeating: 0, count: 64), at: 0x47000, overwrite: true)
        try image.write(MakeCodeProgram.magic + Fixture.runtimeHash + Fixture.programHash, at: 0x47400)
        let board = try SimulatedBoard(profile: BoardProfile(board: .microbitV2, runtimeEnd: 0x46128), image: image)
        #expect(try regionAnswer(board, 2)?.start == 0)
    }

    @Test func dalAlwaysReportsRegionsAndTheOddEnd() throws {
        let image = Fixture.image(family: .nrf51, magicAt: 0x35400, programLength: 12_000)
        let board = try SimulatedBoard(profile: BoardProfile(board: .calliopeMini2), image: image)
        let r1 = try #require(try regionAnswer(board, 1))
        let r2 = try #require(try regionAnswer(board, 2))
        #expect(r1.start == 0x18000 && r1.end == 0x35128 && r1.hash == Fixture.runtimeHash)
        #expect(r2 == RegionInfo(id: 2, start: 0x35400, end: 0x3BBFF, hash: Fixture.programHash))

        var noMagic = image
        try noMagic.write([0x00], at: 0x35400, overwrite: true)
        let plain = try SimulatedBoard(profile: BoardProfile(board: .microbitV1, runtimeEnd: 0x35128), image: noMagic)
        let p2 = try #require(try regionAnswer(plain, 2))
        #expect(p2.start == 0x35400 && p2.end == 0x3BBFF && p2.hash == [UInt8](repeating: 0, count: 8))
        #expect(try regionAnswer(plain, 0)?.end == 0x18000)
    }

    /// Each REGION_INFO builds a fresh `MicroBitMemoryMap`, whose constructor scans the flash
    /// (`findHashes`): a header block written in this boot shows at once.
    @Test func theMapIsScannedAtEachRequest() throws {
        let image = Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 256)
        var bench = Bench(try SimulatedBoard(profile: BoardProfile(board: .microbitV2), image: image, mode: .pairing))
        bench.write([0x00, 0x02])
        #expect(bench.take().last.map { Array($0[10..<18]) } == Fixture.programHash)
        let newHash: [UInt8] = [9, 0, 8, 0, 7, 0, 6, 0]
        var header = MakeCodeProgram.magic + Fixture.runtimeHash + newHash
        header += Fixture.pattern(64 - header.count, seed: 9)
        bench.block(0x47000, header, first: 0)
        bench.write([0x00, 0x02])
        #expect(bench.take().last.map { Array($0[10..<18]) } == newHash)
        // A page erased in this boot: no magic, so CODAL reports empty regions at once.
        var erased = Bench(try SimulatedBoard(profile: BoardProfile(board: .microbitV2), image: image, mode: .pairing))
        erased.write([0x00, 0x02])
        erased.block(0x47000, [UInt8](repeating: 0xFF, count: 64), first: 0)
        _ = erased.take()
        erased.write([0x00, 0x02])
        #expect(erased.take().last.map { Array($0[2..<10]) } == [UInt8](repeating: 0, count: 8))
    }

    @Test func unknownRegionIdsAnswerZerosAndEchoTheId() throws {
        let board = try SimulatedBoard(
            profile: BoardProfile(board: .microbitV2),
            image: Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 64))
        #expect(
            try regionAnswer(board, 7) == RegionInfo(id: 7, start: 0, end: 0, hash: [UInt8](repeating: 0, count: 8)))
    }
}
