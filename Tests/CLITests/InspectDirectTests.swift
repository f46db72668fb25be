@testable import Commands
import FirmwareImage
import Foundation
import Testing
import TestSupport

/// `bitflash inspect` as usually typed skips the argument parser (`InspectCommand.direct`); what
/// it prints and how it exits must be what the parser's path gives.
struct InspectDirectTests {
    @Test func readsTheUsualCommandLines() throws {
        #expect(InspectCommand.direct(["a.hex"])! == ("a.hex", nil, false))
        #expect(InspectCommand.direct(["--json", "a.hex"])! == ("a.hex", nil, true))
        #expect(InspectCommand.direct(["a.hex", "--board", "microbit-v2"])! == ("a.hex", .microbitV2, false))
        #expect(
            InspectCommand.direct(["--board=calliope-mini-3", "a.hex", "--json"])! == ("a.hex", .calliopeMini3, true))
    }

    @Test(arguments: [
        [], ["--json"], ["a.hex", "b.hex"], ["--help"], ["-h"], ["a.hex", "--help"], ["--", "a.hex"], ["-"],
        [""], ["a.hex", "--json", "--json"], ["a.hex", "--board"], ["a.hex", "--board", "nope"],
        ["a.hex", "--board", "--json"], ["a.hex", "--board=microbit-v1", "--board", "microbit-v2"],
        ["a.hex", "--jsonx"], ["a.hex", "--version"], ["--generate-completion-script", "bash"]
    ])
    func leavesEverythingElseToTheParser(_ words: [String]) {
        #expect(InspectCommand.direct(words) == nil)
    }

    /// The same command line with `--` before the file takes the parser's path.
    @Test(
        .enabled(if: BitflashBinary.url != nil, "bitflash binary not built: CLI tests skipped"),
        arguments: [
            (InspectCommandTests.hex, ["--json"]), (InspectCommandTests.hex, []),
            (InspectCommandTests.hex, ["--board", "microbit-v1"]),
            (InspectCommandTests.hex.replacingOccurrences(of: "C975EE51971B", with: "C975EE51971C"), [])
        ])
    func printsAndExitsAsTheParsersPath(_ text: String, _ options: [String]) throws {
        let file = try InspectCommandTests.write(text, name: "same.hex")
        let direct = try BitflashBinary.run(["inspect"] + options + [file.path])
        let parsed = try BitflashBinary.run(["inspect"] + options + ["--", file.path])
        #expect(direct.status == parsed.status)
        #expect(direct.stdout == parsed.stdout)
        #expect(direct.stderr == parsed.stderr)
        let missing = file.deletingLastPathComponent().appendingPathComponent("missing.hex").path
        let a = try BitflashBinary.run(["inspect", missing])
        let b = try BitflashBinary.run(["inspect", "--", missing])
        #expect(a.status == 66 && a.status == b.status && a.stderr == b.stderr)
    }
}
