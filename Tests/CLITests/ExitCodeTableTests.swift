@testable import Commands
import Diagnostics
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Testing
import TestSupport

/// The exit-code table of docs/json-and-exit-codes.md is the single truth: the code's statuses are its rows, and the
/// built binary exits with the documented code for a representative failure of each row.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct ExitCodeTableTests {
    struct Row: Equatable, CustomStringConvertible {
        var code: Int32
        var name: String
        var meaning: String
        var description: String { "\(code) \(name)" }
    }

    /// The rows of the table under "### Exit codes" in docs/json-and-exit-codes.md, meanings without Markdown.
    static func readmeRows() throws -> [Row] {
        let text = try String(
            contentsOf: Corpus.repoRoot.appendingPathComponent("docs/json-and-exit-codes.md"), encoding: .utf8)
        let section = try #require(
            text.components(separatedBy: "### Exit codes").dropFirst().first,
            "docs/json-and-exit-codes.md has no exit-code table")
        var rows: [Row] = []
        for line in section.split(separator: "\n").map(String.init) {
            if line.hasPrefix("#") { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count == 5, let code = Int32(cells[1]) else { continue }
            rows.append(
                Row(code: code, name: cells[2].replacingOccurrences(of: "`", with: ""), meaning: Self.plain(cells[3])))
        }
        return rows
    }

    /// Markdown links reduced to their text, code spans to their content.
    static func plain(_ cell: String) -> String {
        var text = cell
        while let open = text.range(of: "]("), let close = text[open.upperBound...].firstIndex(of: ")"),
            let start = text[..<open.lowerBound].lastIndex(of: "[")
        {
            text.replaceSubrange(start...close, with: text[text.index(after: start)..<open.lowerBound])
        }
        return text.replacingOccurrences(of: "`", with: "")
    }

    @Test("the documented table has exactly the code's statuses, with their names and meanings, in order")
    func tableIsTheCode() throws {
        let rows = try Self.readmeRows()
        let code = Commands.ExitStatus.allCases.map { Row(code: $0.rawValue, name: "\($0)", meaning: $0.meaning) }
        #expect(rows.map(\.description) == code.map(\.description))
        for (documented, own) in zip(rows, code) { #expect(documented.meaning == own.meaning, "\(own)") }
    }

    /// A run of the binary that ends with one row's code.
    struct Case: Sendable, CustomTestStringConvertible {
        var code: Int32
        var arguments: [String]
        var environment: [String: String] = [:]
        var testDescription: String { "\(code): \(arguments.prefix(3).joined(separator: " "))" }
    }

    static let state = (try? BitflashBinary.temporaryDirectory()) ?? URL(fileURLWithPath: "/tmp")
    static func sample(_ name: String) -> String { BitflashBinary.sample(name).path }
    static func sim(_ folder: String) -> [String] { ["--sim-state", state.appendingPathComponent(folder).path] }

    static let cases: [Case] = [
        Case(code: 0, arguments: ["flash", sample("sample-r1-counter.hex"), "--simulate"] + sim("ok")),
        Case(
            code: 3,
            arguments: [
                "flash", sample("sample-r1-counter.hex"), "--simulate", "--sim-drop-at-write", "60", "120", "180", "240"
            ] + sim("fallback")),
        Case(
            code: 64,
            arguments: ["flash", sample("sample-r1-counter.hex"), "--simulate", "--boards", "-1"] + sim("usage")),
        Case(code: 65, arguments: ["flash", "/dev/zero", "--simulate"] + sim("firmware")),
        Case(
            code: 66,
            arguments: ["flash", state.appendingPathComponent("missing.hex").path, "--simulate"] + sim("missing")),
        Case(code: 69, arguments: ["sim", "show"] + sim("empty")),
        Case(
            code: 73,
            arguments: [
                "convert", sample("sample-r1-heart.hex"), "--board", "microbit-v2", "--to", "hex",
                "-o", "/nonexistent/bitflash/out.hex"
            ]),
        Case(
            code: 74,
            arguments: ["flash", sample("sample-r2-heart.hex"), "--simulate", "microbit-v2", "--full-path", "mcumgr"]
                + sim("failed")),
        Case(
            code: 75, arguments: ["flash", sample("sample-r1-heart.hex"), "--device", "AA:BB:CC:DD:EE:FF"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bitflash-test-bus"])
    ]

    /// Rows no run here can reach: 70 is a bug in bitflash; 76 and 77 need a Bluetooth stack, and
    /// `BlueZCommandTests` runs them against a fake org.bluez (unresolved services, a stack that
    /// sends what BlueZ never sends, a refused pairing); 2 needs a board prepared first
    /// (`sim reset --no-app-bluetooth --pairing-mode`), which `FlashCommandTests` does; 130 needs
    /// a Ctrl-C while `watch` runs and 143 a SIGTERM, which `WatchCommandTests` and
    /// `WatchBlueZTests` send.
    static let elsewhere: Set<Int32> = [2, 70, 76, 77, 130, 143]

    @Test("every row of the table has a representative run here or a named reason")
    func everyRowIsCovered() throws {
        let documented = Set(try Self.readmeRows().map(\.code))
        #expect(Set(Self.cases.map(\.code)).union(Self.elsewhere) == documented)
        #expect(Set(Self.cases.map(\.code)).isDisjoint(with: Self.elsewhere))
    }

    @Test("the binary exits with the documented code, and a failure says why on stderr", arguments: cases)
    func binaryExitsAsDocumented(_ c: Case) throws {
        // Fault injection is the laboratory's (`bitflash-lab`); the codes are the same.
        let lab = c.arguments.contains { $0.hasPrefix("--sim-drop") || $0.hasPrefix("--sim-kill") }
        let r = try (lab ? BitflashBinary.lab : BitflashBinary.run)(c.arguments, c.environment)
        #expect(r.status == c.code, "\(c.arguments): exit \(r.status) \(r.stderr.prefix(300))")
        let rows = try Self.readmeRows()
        #expect(rows.contains { $0.code == r.status }, "exit \(r.status) is not in the documented table")
        if c.code >= 64 { #expect(r.stderr.contains("rror"), "\(c.arguments): nothing on stderr") }
    }

    @Test("a state folder another run holds: 75, as the table says of something held for now")
    func heldStateFolderIs75() throws {
        let folder = Self.state.appendingPathComponent("held")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let holder = try StateFolderLockTests.Holder(folder)
        defer { holder.release() }
        let r = try BitflashBinary.run([
            "flash", Self.sample("sample-r1-counter.hex"), "--simulate", "--sim-state", folder.path,
            "--sim-state-wait", "0"
        ])
        #expect(r.status == Int32(Commands.ExitStatus.temporarilyUnavailable.rawValue), "\(r.stderr)")
        #expect(try Self.readmeRows().first { $0.code == 75 }?.meaning.contains("another bitflash run") == true)
    }
}
