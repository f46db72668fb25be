import Foundation
import Testing
import TestSupport

/// The simulated boards' state folder holds the boards' files and may hold the user's own:
/// bitflash reads and replaces only its boards' files.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct StateFolderTests {
    let state: URL
    init() throws { state = try BitflashBinary.temporaryDirectory() }

    func write(_ text: String, _ name: String) throws -> URL {
        let url = state.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test("sim show, sim reset and flash leave the user's other JSON files in the folder alone")
    func unrelatedJSONFilesAreIgnored() throws {
        let notes = try write(#"{"hello": 1}"#, "notes.json")
        let list = try write("[1, 2, 3]", "list.json")
        let empty = try BitflashBinary.run(["sim", "show", "--sim-state", state.path])
        #expect(empty.status == 69, "\(empty.stderr)")
        #expect(
            empty.stderr.contains("no simulated board in") && !empty.stderr.contains("notes.json"), "\(empty.stderr)")
        let reset = try BitflashBinary.run(["sim", "reset", "--boards", "2", "--sim-state", state.path])
        #expect(reset.status == 0, "\(reset.stderr)")
        let flash = try BitflashBinary.run([
            "flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", "--boards", "2",
            "--sim-state", state.path
        ])
        #expect(flash.status == 0, "\(flash.stderr)")
        let show = try BitflashBinary.run(["sim", "show", "--json", "--sim-state", state.path])
        #expect(show.status == 0, "\(show.stderr)")
        let boards = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [[String: Any]])
        #expect(boards.map { $0["name"] as? String } == ["sim-1", "sim-2"])
        let again = try BitflashBinary.run(["sim", "reset", "--sim-state", state.path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try String(contentsOf: notes, encoding: .utf8) == #"{"hello": 1}"#)
        #expect(try String(contentsOf: list, encoding: .utf8) == "[1, 2, 3]")
    }

    @Test("a user's file with a board's name is never read as a board nor replaced, and no advice says to delete it")
    func aUsersFileWithABoardsNameStays() throws {
        let mine = try write(#"{"mine": true}"#, "sim.json")
        for arguments in [
            ["flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate"], ["sim", "reset"],
            ["info", "--simulate"]
        ] {
            let r = try BitflashBinary.run(arguments + ["--sim-state", state.path])
            #expect(r.status == 73, "\(arguments): \(r.stderr)")
            #expect(
                r.stderr.contains("\(mine.path) is not a simulated board's file, so bitflash leaves it as it is"),
                "\(arguments): \(r.stderr)")
            #expect(!r.stderr.lowercased().contains("delete"), "\(r.stderr)")
        }
        let show = try BitflashBinary.run(["sim", "show", "--sim-state", state.path])
        #expect(show.status == 69, "\(show.stderr)")
        #expect(try String(contentsOf: mine, encoding: .utf8) == #"{"mine": true}"#)
    }

    @Test("a board's file that is damaged is named, with the command that starts the board afresh")
    func aDamagedBoardFileIsNamed() throws {
        let damaged = try write(#"{"format": "bitflash-simulated-board", "version": 1}"#, "sim.json")
        let r = try BitflashBinary.run(["sim", "show", "--sim-state", state.path])
        #expect(r.status == 66, "\(r.stderr)")
        #expect(r.stderr.contains(damaged.path) && r.stderr.contains("run `bitflash sim reset`"), "\(r.stderr)")
        #expect(!r.stderr.lowercased().contains("delete"), "\(r.stderr)")
    }
}
