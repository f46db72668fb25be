import Foundation
import Testing
import TestSupport

/// Samples/firmware/ holds exactly what `bitflash sim samples` writes today.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct SampleFilesTests {
    static let names = ["sample-r1-heart.hex", "sample-r1-counter.hex", "sample-r2-heart.hex"]

    @Test func theCommittedSampleFilesEqualWhatTheGeneratorWritesNow() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let r = try BitflashBinary.lab(["sim", "samples", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        let written = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(written == Self.names.sorted())
        for name in Self.names {
            let fresh = try Data(contentsOf: dir.appendingPathComponent(name))
            let committed = try Data(contentsOf: BitflashBinary.committedSample(name))
            #expect(fresh == committed, "\(name) differs: run Samples/firmware/regenerate.sh and commit the result")
        }
    }

    @Test(arguments: names)
    func eachSampleHoldsBothChipFamiliesWithAMakeCodeProgram(_ name: String) throws {
        for board in ["microbit-v1", "microbit-v2"] {
            let r = try BitflashBinary.run([
                "inspect", "--json", "--board", board, BitflashBinary.committedSample(name).path
            ])
            #expect(r.status == 0, "\(name) \(board): \(r.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            #expect(json["format"] as? String == "universal-hex")
            let section = try #require((json["sections"] as? [[String: Any]])?.first)
            #expect(section["makeCode"] is [String: Any], "\(name) \(board) has a MakeCode program")
        }
    }
}
