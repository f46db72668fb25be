import FirmwareImage
import Foundation
import Laboratory
import SimulatedBoard
import SimulatedFlashing
import Testing
import TestSupport
@testable import Flashing

/// Partial flashing with the real MakeCode files of the shared corpus: a program of the same
/// runtime (the runtime hash `analysis.json` records) goes partial and ends byte-exact; an edited
/// program goes partial; the same file again is up to date and sends no FLASH_DATA.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
struct CorpusFlashTests {
    /// One MakeCode image of the corpus: a file's section for one board, with its runtime hash.
    struct Section: Sendable, Hashable, CustomTestStringConvertible {
        var file: String
        var board: Board
        var runtimeHash: String
        var testDescription: String { "\(file) [\(board.rawValue)]" }
    }

    /// A pair of sections sharing a runtime hash and a board: B is flashed onto a board holding A.
    struct Pair: Sendable, CustomTestStringConvertible {
        var a: Section
        var b: Section
        var testDescription: String { "\(b.file) onto \(a.file) [\(a.board.rawValue), runtime \(a.runtimeHash)]" }
    }

    /// Every section of `real/` in which `analysis.json` found one MakeCode magic.
    static let sections: [Section] = {
        guard Corpus.isAvailable, let real = (try? Corpus.analysis())?["real"] as? [String: Any] else { return [] }
        var found: [Section] = []
        for (file, any) in real.sorted(by: { $0.key < $1.key }) {
            guard let entry = any as? [String: Any], let sections = entry["sections"] as? [[String: Any]] else {
                continue
            }
            for s in sections {
                guard let magics = s["makecode"] as? [[String: Any]], magics.count == 1,
                    let hash = magics[0]["hash8"] as? String,
                    let board = board(file: file, boardID: s["board_id"] as? String)
                else { continue }
                found.append(Section(file: file, board: board, runtimeHash: hash))
            }
        }
        return found
    }()

    /// Ordered pairs of different files with the same runtime hash on the same board, among the
    /// sections whose magic the simulated board finds.
    static let pairs: [Pair] = findable.flatMap { a in
        findable.filter { $0.file != a.file && $0.board == a.board && $0.runtimeHash == a.runtimeHash }.map {
            Pair(a: a, b: $0)
        }
    }

    /// The board a section is for: from its Universal Hex board ID, else from the file's name.
    static func board(file: String, boardID: String?) -> Board? {
        switch boardID {
        case "0x9900", "0x9901": return .microbitV1
        case "0x9903", "0x9904": return .microbitV2
        case nil: break
        default: return nil
        }
        if file.hasPrefix("calliope-mini12") { return .calliopeMini2 }
        if file.hasPrefix("calliope-mini1") { return .calliopeMini1 }
        if file.hasPrefix("calliope-mini3") { return .calliopeMini3 }
        if file.hasPrefix("makecode-v1") || file.hasPrefix("pxt-2016-microbit") { return .microbitV1 }
        if file.hasPrefix("makecode-v2") { return .microbitV2 }
        return nil
    }

    static func image(_ s: Section) throws -> MemoryImage {
        try Firmware.parse(Corpus.bytes("real/" + s.file), fileName: s.file).image(for: s.board)
    }

    static func firmware(_ image: MemoryImage, _ s: Section, name: String) -> Firmware {
        Firmware(
            fileName: name, format: .intelHex, sections: [.init(family: s.board.family, image: image, warnings: [])])
    }

    /// The program the simulated board would find in `image`, or nil (with the reason) when its
    /// runtime would not find the magic where it scans (below the runtime's end, off a page boundary).
    static func programTheBoardFinds(_ image: MemoryImage, _ s: Section) throws -> (MakeCodeProgram, SimulatedBoard)? {
        guard let program = MakeCodeProgram.find(in: image, family: s.board.family) else { return nil }
        let board = try SimulatedBoard(s.board, image: image, mode: .pairing)
        guard board.memoryMap.first(where: { $0.id == 2 })?.start == program.magicAddress else { return nil }
        #expect(
            program.runtimeHash.hexString.uppercased().hasPrefix(s.runtimeHash.uppercased()),
            "\(s.file): the runtime hash differs from analysis.json")
        return (program, board)
    }

    /// True when the program's data lies inside the region 2 the board declares.
    static func fits(_ program: MakeCodeProgram, _ board: SimulatedBoard) -> Bool {
        let declared = CampaignInvariants.declaredProgramRegion(of: board)
        return program.region.lowerBound >= declared.lowerBound && program.region.upperBound <= declared.upperBound
    }

    static func flash(_ firmware: Firmware, onto id: BoardID, _ board: Board, in sim: inout Simulation) throws
        -> SimulatedFlashRun
    {
        SimulatedFlash.run(
            plan: try .make(firmware: firmware, board: board), options: FlashOptions(mode: .partial),
            on: id, named: "sim", in: &sim)
    }

    @Test(arguments: pairs)
    func programOfTheSameRuntimeGoesPartialAndEndsByteExact(_ pair: Pair) throws {
        let a = try Self.image(pair.a), b = try Self.image(pair.b)
        guard let (_, board) = try Self.programTheBoardFinds(a, pair.a),
            let (programB, _) = try Self.programTheBoardFinds(b, pair.b)
        else {
            Issue.record("the simulated board does not find the MakeCode magic of \(pair.a.file) or \(pair.b.file)")
            return
        }
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(board)
        let run = try Self.flash(Self.firmware(b, pair.b, name: pair.b.file), onto: id, pair.a.board, in: &sim)
        guard Self.fits(programB, board) else {
            // A program reaching past the region the board declared (the "full flash" files run
            // to the end of the flash): partial flashing refuses and writes nothing.
            #expect(run.result.error?.contains("full") == true, "\(run.result.error ?? "no error")")
            #expect(try sim.board(id).flash.writeLog.isEmpty)
            return
        }
        #expect(run.result.error == nil, "\(run.result.error ?? "")")
        let programA = try #require(MakeCodeProgram.find(in: a, family: pair.a.board.family))
        #expect(run.result.path == (programA.programHash == programB.programHash ? .upToDate : .partial))
        #expect(try sim.board(id).readFlash(programB.region) == b.read(programB.region))
    }

    /// Sections whose magic the simulated board finds (the others are not partial-flashable).
    static let findable: [Section] = sections.filter { s in
        ((try? image(s)).flatMap { try? programTheBoardFinds($0, s) }) != nil
    }

    @Test(arguments: findable)
    func editedProgramGoesPartialThenTheSameFileIsUpToDate(_ s: Section) throws {
        let original = try Self.image(s)
        let (program, board) = try #require(try Self.programTheBoardFinds(original, s))
        // The same runtime with another program: a changed program hash and changed code.
        var edited = original
        let hashAt = program.magicAddress + 24
        try edited.write(original.read(hashAt..<(hashAt + 8)).map { $0 ^ 0xA5 }, at: hashAt, overwrite: true)
        let codeAt = (program.region.lowerBound + UInt32(program.region.count / 2)) & ~3
        try edited.write(original.read(codeAt..<(codeAt + 8)).map { $0 ^ 0x5A }, at: codeAt, overwrite: true)
        let newProgram = try #require(MakeCodeProgram.find(in: edited, family: s.board.family))
        #expect(newProgram.programHash != program.programHash)
        #expect(newProgram.runtimeHash == program.runtimeHash)

        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(board)
        let firmware = Self.firmware(edited, s, name: "edited-" + s.file)
        let first = try Self.flash(firmware, onto: id, s.board, in: &sim)
        guard Self.fits(newProgram, board) else {
            #expect(first.result.error?.contains("full") == true, "\(first.result.error ?? "no error")")
            #expect(try sim.board(id).flash.writeLog.isEmpty)
            return
        }
        #expect(first.result.error == nil, "\(first.result.error ?? "")")
        #expect(first.result.path == .partial)
        let after = try sim.board(id)
        #expect(try after.readFlash(newProgram.region) == edited.read(newProgram.region))
        #expect(after.memoryMap.first { $0.id == 2 }?.hash == newProgram.programHash)

        // The user resets the board into pairing mode and flashes the same file again.
        try sim.updateBoard(id) { $0.reset(holdingButtons: true) }
        let second = try Self.flash(firmware, onto: id, s.board, in: &sim)
        #expect(second.result.path == .upToDate)
        #expect(second.result.bytesSent == 0)
        // Link-level writes are traced as "<kind> <HEX>": no FLASH_DATA (01 …) went on air.
        let writes = second.trace.entries.filter { $0.kind == .write }.map {
            $0.text.split(separator: " ").last.map(String.init) ?? ""
        }
        #expect(!writes.isEmpty)
        #expect(!writes.contains { $0.hasPrefix("01") })
        // The first flash did send them (the check above can fail).
        #expect(
            first.trace.entries.contains {
                $0.kind == .write && $0.text.split(separator: " ").last?.hasPrefix("01") == true
            })
    }

    @Test func theCorpusHoldsPairsOfTheSameRuntime() {
        // 8.0.18 small heart, 8.0.11 beating heart and 8.0.18 serial counter share both runtimes.
        let v2 = Self.pairs.filter { $0.a.board == .microbitV2 && $0.a.runtimeHash == "22204AC874977E7F" }
        #expect(v2.count >= 6)
        #expect(Self.findable.count >= 20)
    }
}
