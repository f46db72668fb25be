import Foundation
import Testing
import TestSupport

/// `flash --retry-failed` reads the record of the last class run back from the state folder; a
/// record edited by hand (or cut short) is checked before anything is flashed: a board name that
/// is not one the store makes, a board that does not exist, a board named twice, an address that
/// is not one, an empty or corrupt file. Each is refused with 66 (the record cannot be read as
/// one) and a sentence that names the record, never Foundation's text.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct ClassRecordValidationTests {
    let root: URL
    let state: URL
    let file: String

    init() throws {
        root = try BitflashBinary.temporaryDirectory()
        state = root.appendingPathComponent("a/b/state")
        file = BitflashBinary.sample("sample-r1-counter.hex").path
    }

    var record: URL { state.appendingPathComponent("last-class-run.json") }

    func row(_ board: String, address: String? = nil) -> [String: Any] {
        var row: [String: Any] = [
            "board": board, "result": "failed", "fallback": false, "seconds": 1.5, "verified": false, "exitCode": 74
        ]
        if let address { row["address"] = address }
        return row
    }

    /// A class of two boards flashed, then the record replaced by `rows`.
    func writeRecord(_ rows: [[String: Any]]) throws {
        let setUp = try BitflashBinary.run(["flash", file, "--simulate", "--boards", "2", "--sim-state", state.path])
        #expect(setUp.status == 0, "\(setUp.stderr)")
        let json: [String: Any] = [
            "file": URL(fileURLWithPath: file).standardizedFileURL.path, "date": "2026-11-28T12:00:00Z", "boards": rows
        ]
        try JSONSerialization.data(withJSONObject: json).write(to: record)
    }

    func retry() throws -> BitflashBinary.Result {
        try BitflashBinary.run(["flash", file, "--simulate", "--retry-failed", "--sim-state", state.path])
    }

    static let cases: [(name: String, rows: [(String, String?)], says: String)] = [
        (
            "escapes the folder", [("../../escaped-board", nil)],
            "'../../escaped-board' is not the name of a simulated board"
        ),
        ("a path", [("sub/sim-1", nil)], "'sub/sim-1' is not the name of a simulated board"),
        ("not made by the store", [("sim-99", nil)], "no simulated board 'sim-99'"),
        ("named twice", [("sim-1", nil), ("sim-1", nil)], "names the board 'sim-1' twice"),
        ("a bad address", [("sim-1", "F0:0D:zz")], "'F0:0D:zz' is not a Bluetooth address")
    ]

    @Test("a hand-edited record is refused with 66 before anything is flashed", arguments: 0..<5)
    func editedRecordIsRefused(index: Int) throws {
        let c = Self.cases[index]
        try writeRecord(c.rows.map { row($0.0, address: $0.1) })
        let boardsBefore = try FileManager.default.contentsOfDirectory(atPath: state.path).sorted()
        let r = try retry()
        #expect(r.status == 66, "\(c.name): \(r.status) \(r.stderr)")
        #expect(r.stderr.contains(record.path), "\(c.name): \(r.stderr)")
        #expect(r.stderr.contains(c.says), "\(c.name): \(r.stderr)")
        #expect(!r.stderr.contains("retrying"), "\(c.name): \(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path).sorted() == boardsBefore)
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("a/escaped-board.json").path))
    }

    @Test(
        "an empty or corrupt record is refused with 66 and a sentence of bitflash's own", arguments: ["", "{\"file\":"])
    func corruptRecordIsRefused(text: String) throws {
        try writeRecord([row("sim-1")])
        try Data(text.utf8).write(to: record)
        let r = try retry()
        #expect(r.status == 66, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("\(record.path) is not a record of a class run"), "\(r.stderr)")
        #expect(r.stderr.contains(text.isEmpty ? "the file is empty" : "not valid JSON"), "\(r.stderr)")
        #expect(!r.stderr.contains("couldn’t be read") && !r.stderr.contains("correct format"), "\(r.stderr)")
    }

    @Test("a valid record still retries its failed boards")
    func validRecordRetries() throws {
        try writeRecord([row("sim-1"), row("sim-2", address: "F0:0D:00:00:00:02")])
        let r = try retry()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("retrying 2 of 2 boards that failed: sim-1, sim-2"), "\(r.stderr)")
    }
}
