import Foundation
import Testing
import TestSupport

/// `bitflash-lab bench parse --processes N`: whole `bitflash inspect` processes against python3
/// processes parsing the same file with intelhex. Only the report's shape is checked, never a time.
@Suite(
    .enabled(
        if: BitflashBinary.url != nil && BitflashBinary.labURL != nil,
        "bitflash binaries not built (.build/debug): CLI tests skipped"))
struct BenchParseProcessTests {
    static let universal = "real/universal-sections-32-duck-9901-ghost-9903.hex"

    static func arguments(bitflash: String, runs: Int) -> [String] {
        [
            "bench", "parse", "--file", Corpus.testdata.appendingPathComponent(universal).path, "--iterations", "1",
            "--processes", String(runs), "--bitflash", bitflash
        ]
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func comparesWholeProcessesAndGivesIntelHexTheUniversalHexPerBoard() throws {
        guard Python.has("intelhex") else {
            print("Python intelhex not installed: the whole-process comparison is not checked")
            return
        }
        let bitflash = try #require(BitflashBinary.url).path
        let r = try BitflashBinary.lab(Self.arguments(bitflash: bitflash, runs: 2))
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.lines
        #expect(lines.contains("  processes: 2 runs each, alternately (median wall / median CPU per process)"))
        let ours = try #require(lines.first { $0.hasPrefix("    bitflash inspect FILE:") })
        #expect(ours.hasSuffix("(\(bitflash))"))
        let peer = try #require(lines.first { $0.hasPrefix("    python3 intelhex.IntelHex:") })
        #expect(peer.hasSuffix("(on 2 per-board plain hexes)"), "\(peer)")
        let ratio = try #require(lines.first { $0.hasPrefix("    ratio:") })
        #expect(ratio.hasSuffix("x CPU") && ratio.contains("x wall, "), "\(ratio)")
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func saysWhyWhenTheBitflashExecutableCannotStart() throws {
        guard Python.has("intelhex") else {
            print("Python intelhex not installed: the whole-process comparison is not checked")
            return
        }
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-bitflash-\(UUID())").path
        let r = try BitflashBinary.lab(Self.arguments(bitflash: missing, runs: 1))
        #expect(r.status == 0, "\(r.stderr)")
        let line = try #require(r.lines.first { $0.contains("not run (bitflash inspect failed") }, "\(r.stdout)")
        #expect(line.contains("cannot start \(missing)"))
        #expect(!r.lines.contains { $0.hasPrefix("    ratio:") })
    }
}
