import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

/// Every hex file of the shared corpus against the ground truth in `analysis.json`:
/// sections, address runs, MakeCode magic addresses and hashes, what the device would find.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
struct HexCorpusTests {
    /// `real/x.hex` and `derived/y.hex`, from the corpus listing (one placeholder when it is absent,
    /// so the suite shows as skipped rather than empty).
    static let hexFiles: [String] = corpusFiles().filter { $0.lowercased().hasSuffix(".hex") }
    static let otherFiles: [String] = corpusFiles().filter { !$0.lowercased().hasSuffix(".hex") }

    static func corpusFiles() -> [String] {
        guard Corpus.isAvailable, let analysis = try? Corpus.analysis() else { return ["(corpus absent)"] }
        return ["real", "derived"].flatMap { group in
            ((analysis[group] as? [String: Any]) ?? [:]).keys.sorted().map { "\(group)/\($0)" }
        }
    }

    static func entry(_ path: String) throws -> [String: Any] {
        let parts = path.split(separator: "/", maxSplits: 1).map(String.init)
        let analysis = try Corpus.analysis()
        return try #require((analysis[parts[0]] as? [String: Any])?[parts[1]] as? [String: Any])
    }

    static func address(_ any: Any?) -> UInt32? {
        guard let s = any as? String, s.hasPrefix("0x") else { return nil }
        return UInt32(s.dropFirst(2), radix: 16)
    }

    @Test("matches analysis.json", arguments: hexFiles)
    func matchesAnalysis(_ path: String) throws {
        let expected = try Self.entry(path)
        let bytes = try Corpus.bytes(path)
        let name = String(path.split(separator: "/").last!)

        if (expected["format"] as? String) == "not Intel HEX" {
            // The negative case: a Python file named .hex. The error names line 1, column 1 and the '#'.
            #expect(throws: FirmwareImageError.missingColon(TextPosition(line: 1, column: 1), found: UInt8(ascii: "#")))
            {
                try Firmware.parse(bytes, fileName: name)
            }
            let message = catchError { try Firmware.parse(bytes, fileName: name) }
            #expect(message.contains("line 1, column 1"))
            #expect(message.contains("expected ':'"))
            return
        }

        let firmware = try Firmware.parse(bytes, fileName: name)
        let hex = try IntelHexReader.parse(bytes)
        let expectedSections = try #require(expected["sections"] as? [[String: Any]])
        #expect(firmware.sections.count == expectedSections.count)
        #expect(firmware.format == ((expected["universal_hex"] as? Bool) == true ? .universalHex : .intelHex))

        // Record counts before the end-of-file record.
        var types: [UInt8: Int] = [:]
        for (k, v) in (expected["record_types"] as? [String: Int]) ?? [:] {
            types[UInt8(k, radix: 16)!, default: 0] += v
        }
        for (k, v) in (expected["record_types_after_first_eof"] as? [String: Int]) ?? [:] {
            types[UInt8(k, radix: 16)!, default: 0] -= v
            if types[UInt8(k, radix: 16)!] == 0 { types[UInt8(k, radix: 16)!] = nil }
        }
        #expect(hex.recordTypeCounts == types)
        #expect(hex.lineCount == expected["lines_total"] as? Int)

        // Records after the end-of-file record are reported, not read.
        let afterEOF = ((expected["record_types_after_first_eof"] as? [String: Int]) ?? [:]).values.reduce(0, +)
        let warned = firmware.allWarnings.contains {
            if case .linesAfterEndOfFile = $0 { return true } else { return false }
        }
        #expect(warned == (afterEOF > 0), "records after EOF: \(afterEOF), warnings: \(firmware.allWarnings)")

        if (types[0x0A] ?? 0) > 0 {
            #expect(firmware.universalHexLayout == (name.contains("blocks") ? .blocks : .sections))
        }

        for want in expectedSections {
            let id = Self.address(want["board_id"]).map { UInt16($0) }
            let section = try #require(
                firmware.sections.first { $0.boardID == id }, "no section for \(String(describing: id))")
            let label = "\(name) [\(id.map(UniversalHex.boardIDString) ?? "plain")]"

            let runs = try #require(want["runs"] as? [[Any]]).map { Self.address($0[0])!..<Self.address($0[1])! }
            #expect(section.image.runs == runs, "\(label): runs")
            #expect(section.image.byteCount == want["data_bytes"] as? Int, "\(label): data bytes")

            // Every magic occurrence, at any alignment, with its runtime hash.
            let magics = (want["makecode"] as? [[String: Any]]) ?? []
            let found = MakeCodeProgram.magicAddresses(in: section.image)
            #expect(found == magics.compactMap { Self.address($0["magic_addr"]) }, "\(label): magic addresses")
            for m in magics {
                let a = try #require(Self.address(m["magic_addr"]))
                #expect(
                    section.image.read((a + 16)..<(a + 24)).hexString == m["hash8"] as? String,
                    "\(label): hash8 at \(a)")
            }

            // What the device would find: the page-aligned magic inside the application region.
            guard let family = section.family else {
                #expect(id == nil, "\(label): a known board ID always gives a family")
                continue
            }
            let search = MakeCodeProgram.searchRange(for: family)
            let deviceMagic = found.first { $0 % family.pageSize == 0 && search.contains($0) }
            let program = MakeCodeProgram.find(in: section.image, family: family)
            #expect(program?.magicAddress == deviceMagic, "\(label): found program")
            // `inspect`'s one pass over the image gives what the device's page walk gives, or its error.
            #expect(
                (try? MakeCodeProgram.locate(in: section.image, family: family, magicAt: found)) == program,
                "\(label): one-pass locate")
            #expect(
                catchError { try MakeCodeProgram.locate(in: section.image, family: family, magicAt: found) }
                    == catchError { try MakeCodeProgram.locate(in: section.image, family: family) },
                "\(label): one-pass locate's error")
            if let program, let m = magics.first(where: { Self.address($0["magic_addr"]) == program.magicAddress }) {
                #expect(program.runtimeHash.hexString == m["hash8"] as? String)
                let guessEnd = try #require(Self.address((m["program_region_guess"] as? [Any])?[1]))
                let lastBelowScratch = min(guessEnd, family.layout.scratchPage)
                #expect(
                    program.region == program.magicAddress..<((lastBelowScratch + 63) / 64 * 64), "\(label): region")
            }
            if program == nil, !magics.isEmpty {
                #expect(throws: FirmwareImageError.self) {
                    try MakeCodeProgram.locate(in: section.image, family: family)
                }
            }
        }
    }

    /// UF2, MCUboot and other non-hex files are read by the other readers of the module; here only
    /// their detection is checked (by magic number, not by name).
    @Test("non-hex corpus files are told apart by content", arguments: otherFiles)
    func detectsNonHexFiles(_ path: String) throws {
        let expected = try Self.entry(path)
        let bytes = try Corpus.bytes(path)
        let format = Firmware.detectFormat(bytes)
        switch expected["format"] as? String {
        case "UF2": #expect(format == .uf2)
        case "MCUboot image": #expect(format == .mcuboot)
        default: #expect(format == nil, "\(path): \(String(describing: expected["format"]))")
        }
        print("note: \(path) is not a hex file; only its format detection is checked here")
    }

    @Test func guessesTheChipOfPlainHexes() throws {
        let cases: [(String, ChipFamily?)] = [
            ("real/calliope-mini3-makecode-8.1.11-demo.hex", .nrf52833),
            ("real/calliope-mini12-makecode-8.1.11-demo-classic.hex", .nrf51),
            ("real/makecode-v2-early-ghost-music-16.hex", .nrf52833),
            ("real/micropython-0.9-pyeditor-testdata.hex", .nrf51),
            ("real/calliope-mini12-micropython.hex", .nrf51),
            ("real/micropython-v2-beta-uicr-crlf.hex", .nrf52833),
            ("real/makecode-v1-duck-umbrella-fullflash-16.hex", .nrf51),
            ("real/nrf52840-s140-softdevice-6.1.1.hex", nil),
            ("real/mcuboot-zephyr-hello_world.hex", nil),
            ("derived/mcuboot-makecode-v2-program-1.2.3.ed25519.signed.hex", nil)
        ]
        for (path, family) in cases {
            let f = try Firmware.parse(try Corpus.bytes(path), fileName: path)
            #expect(f.sections.first?.family == family, "\(path)")
        }
    }

    @Test func selectsTheBoardSectionOfAUniversalHex() throws {
        let f = try Firmware.parse(
            try Corpus.bytes("real/makecode-universal-8.0.18-small-heart.hex"), fileName: "heart.hex")
        #expect(try f.section(for: .calliopeMini3).boardID == 0x9903)
        #expect(try f.section(for: .microbitV1).boardID == 0x9900)
        let v2only = try Firmware.parse(
            try Corpus.bytes("derived/makecode-v2-8.0.18-small-heart.board-0x9903.hex"), fileName: "v2.hex")
        #expect(throws: FirmwareImageError.self) { try v2only.image(for: .microbitV1) }
    }

    @Test func keepsTheFullFlashProgramRegionBelowTheScratchPage() throws {
        let f = try Firmware.parse(
            try Corpus.bytes("real/makecode-v1-duck-umbrella-fullflash-32.hex"), fileName: "duck.hex")
        let p = try MakeCodeProgram.locate(in: try f.image(for: .microbitV1), family: .nrf51)
        #expect(p.region == 0x32C00..<0x3B400)
    }

    @Test func reportsTheUnalignedMagicOf2016Hexes() throws {
        let f = try Firmware.parse(
            try Corpus.bytes("real/pxt-2016-microbit-blocks-unaligned-magic.hex"), fileName: "pxt.hex")
        #expect(
            throws: FirmwareImageError.noMakeCodeProgram(
                .notPageAligned(addresses: [0x30730], pageSize: 1024), family: .nrf51)
        ) {
            try MakeCodeProgram.locate(in: try f.image(for: .microbitV1), family: .nrf51)
        }
    }

    @Test func ignoresTheFalseMagicInsideCODAL() throws {
        let f = try Firmware.parse(
            try Corpus.bytes("real/makecode-universal-3.0.67-serial-writer-double-magic.hex"), fileName: "x.hex")
        let image = try f.image(for: .microbitV2)
        #expect(MakeCodeProgram.magicAddresses(in: image) == [0x2BCD4, 0x45000])
        let p = try MakeCodeProgram.locate(in: image, family: .nrf52833)
        #expect(p.magicAddress == 0x45000)
        #expect(p.runtimeHash.hexString == "CDE1441B2354511B")
        #expect(p.region == 0x45000..<0x459C0)
    }
}

/// The error thrown by `body`, as text.
func catchError(_ body: () throws -> Any) -> String {
    do { _ = try body(); return "" } catch { return "\(error)" }
}
