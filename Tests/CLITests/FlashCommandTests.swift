import Foundation
import Testing
import TestSupport

/// `bitflash flash --simulate`, run as a subprocess on simulated boards in a temporary state folder.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct FlashCommandTests {
    let state: URL
    init() throws { state = try BitflashBinary.temporaryDirectory() }

    /// A flash of a simulated board; with fault injection or a trace, in the laboratory (`bitflash-lab`).
    func flash(_ sample: String, _ extra: [String] = []) throws -> BitflashBinary.Result {
        let lab = extra.contains {
            $0.hasPrefix("--sim-drop") || $0.hasPrefix("--sim-reset") || $0.hasPrefix("--sim-kill") || $0 == "--trace"
        }
        return try (lab ? BitflashBinary.lab : BitflashBinary.run)(
            ["flash", BitflashBinary.sample(sample).path, "--simulate", "--sim-state", state.path] + extra, [:])
    }

    /// The final `{"type":"result"}` object of a `--json` run.
    func results(_ r: BitflashBinary.Result) throws -> [[String: Any]] {
        let objects = try r.lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        return objects.filter { $0["type"] as? String == "result" }
    }

    @Test(arguments: [
        ("sample-r1-counter.hex", "partial"),  // an edit: same runtime as the fresh board's r1 + heart
        ("sample-r2-heart.hex", "full")  // a new runtime
    ])
    func aFlashThenTheSameFileAgainIsUpToDate(_ sample: String, _ firstPath: String) throws {
        // A fresh board holds runtime r1 with 'heart' (what sample-r1-heart.hex holds).
        var paths: [String] = []
        for file in [sample, sample] {
            let r = try flash(file, ["--json"])
            #expect(r.status == 0, "\(file): \(r.stderr)")
            let result = try #require(try results(r).first)
            paths.append(result["path"] as? String ?? "none")
        }
        #expect(paths == [firstPath, "up-to-date"])
    }

    @Test func simResetFromAFileSetsWhatTheBoardHolds() throws {
        let reset = try BitflashBinary.run([
            "sim", "reset", "--from", BitflashBinary.sample("sample-r2-heart.hex").path,
            "--sim-state", state.path
        ])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(reset.stdout.contains("now holds sample-r2-heart.hex"))
        let same = try flash("sample-r2-heart.hex", ["--json"])
        #expect(try results(same).first?["path"] as? String == "up-to-date")
        let back = try flash("sample-r1-heart.hex", ["--json"])
        #expect(try results(back).first?["path"] as? String == "full")
    }

    @Test func aPlainSimulateFlashesTheKindOfBoardTheStateFolderHolds() throws {
        let reset = try BitflashBinary.run(["sim", "reset", "--profile", "microbit-v2", "--sim-state", state.path])
        #expect(reset.status == 0, "\(reset.stderr)")
        // A new runtime on a stock board: Secure DFU, not a refusal for want of an MCUboot board.
        let r = try flash("sample-r2-heart.hex", ["--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let result = try #require(try results(r).first)
        #expect(result["path"] as? String == "full")
        #expect(r.stdout.contains("DFU"))
    }

    @Test func jsonEventsAndTheResultCarryEveryDocumentedField() throws {
        let r = try flash("sample-r1-counter.hex", ["--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let objects = try r.lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let types = Set(objects.compactMap { $0["type"] as? String })
        #expect(types.isSuperset(of: ["phase", "progress", "result"]))
        for event in objects where event["type"] as? String != "result" {
            #expect(event["board"] as? String == "sim")
            #expect(event["t"] is Double || event["t"] is Int)
        }
        let progress = objects.filter { $0["type"] as? String == "progress" }
        #expect(progress.last?["done"] as? Int == progress.last?["total"] as? Int)
        let result = try #require(try results(r).first)
        #expect(result["path"] as? String == "partial")
        #expect((result["reason"] as? [String: Any])?["code"] as? String == "runtime-matches")
        #expect(((result["reason"] as? [String: Any])?["message"] as? String)?.isEmpty == false)
        #expect(result["fallback"] as? Bool == false)
        // The counter program is 8,208 bytes: whole 64-byte blocks are sent, the last one padded,
        // plus the block that writes the program hash last (so an interrupted flash never looks up to date).
        let sent = try #require(result["bytesSent"] as? Int)
        #expect(sent % 64 == 0 && sent >= 8208 && sent < 8208 + 128)
        #expect((result["seconds"] as? Double ?? 0) > 0)
        #expect(result["verified"] as? Bool == true)
        #expect(result.keys.contains("error") == false || result["error"] is NSNull)
        #expect(result["board"] as? String == "sim")
    }

    @Test func partialFlashingThatKeepsFailingFallsBackAndExits3() throws {
        let r = try flash("sample-r1-counter.hex", ["--sim-drop-at-write", "60", "120", "180", "240"])
        #expect(r.status == 3, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("full (after fallback)"), "\(r.stdout)")
        #expect(r.stdout.contains("verified"))
    }

    @Test func aProgramWithoutBluetoothIsWrittenButReportedUnverifiedWithExit2() throws {
        // The board runs a program that keeps Bluetooth off in application mode; the user put it
        // into pairing mode. After the write it restarts into that program and cannot be reached
        // to read it back: that is no success.
        let reset = try BitflashBinary.run([
            "sim", "reset", "--no-app-bluetooth", "--pairing-mode", "--sim-state", state.path
        ])
        #expect(reset.status == 0, "\(reset.stderr)")
        let r = try flash("sample-r1-counter.hex", ["--json"])
        #expect(r.status == 2, "\(r.stdout)\n\(r.stderr)")
        let result = try #require(try results(r).first)
        #expect(result["path"] as? String == "partial")
        #expect(result["verified"] as? Bool == false)
        #expect(result["verification"] as? String == "unverified")
        #expect(
            (result["verificationNote"] as? String)?.contains("Bluetooth off in application mode") == true, "\(result)")
        #expect(result["error"] == nil || result["error"] is NSNull)
        // The plain output says it in words.
        let again = try BitflashBinary.run([
            "sim", "reset", "--no-app-bluetooth", "--pairing-mode", "--sim-state", state.path
        ])
        #expect(again.status == 0)
        let plain = try flash("sample-r1-counter.hex")
        #expect(plain.status == 2)
        #expect(plain.stdout.contains("NOT VERIFIED: the board did not accept a connection"), "\(plain.stdout)")
    }

    @Test func aNewRuntimeOverMcuMgrOnABoardWithoutMCUbootFailsWithExit74AndSaysWhatToDo() throws {
        let r = try flash("sample-r2-heart.hex", ["--simulate", "microbit-v2", "--full-path", "mcumgr", "--json"])
        #expect(r.status == 74, "\(r.stdout)\n\(r.stderr)")
        let result = try #require(try results(r).first)
        #expect(result["path"] is NSNull || result["path"] == nil)
        #expect((result["error"] as? String)?.contains("leave out --full-path") == true)
    }

    @Test func aMissingFileExits66() throws {
        let r = try BitflashBinary.run([
            "flash", state.appendingPathComponent("nothing.hex").path, "--simulate", "--sim-state", state.path
        ])
        #expect(r.status == 66)
        #expect(r.stderr.contains("nothing.hex: cannot read the file"), "\(r.stderr)")
    }

    @Test func aCorruptFileExits65WithFileLineAndColumn() throws {
        var text = try String(contentsOf: BitflashBinary.sample("sample-r1-heart.hex"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var third = Array(lines[2])
        third[third.count - 1] = third.last == "0" ? "1" : "0"  // break the checksum of line 3
        text = ([String(lines[0]), String(lines[1]), String(third)] + lines.dropFirst(3).map(String.init)).joined(
            separator: "\n")
        let file = state.appendingPathComponent("broken.hex")
        try Data(text.utf8).write(to: file)
        let r = try BitflashBinary.run(["flash", file.path, "--simulate", "--sim-state", state.path])
        #expect(r.status == 65)
        #expect(r.stderr.contains("broken.hex:3:"), "\(r.stderr)")
        #expect(r.stderr.contains("checksum"), "\(r.stderr)")
    }

    @Test(arguments: [
        ["flash"],
        ["flash", "x.hex", "--boards", "0", "--simulate"],
        ["flash", "x.hex", "--mode", "sideways"],
        ["flash", "x.hex", "--boards", "3"],
        ["nonsense"],
        ["convert", "x.hex", "--to", "elf", "--board", "microbit-v2", "-o", "y"]
    ])
    func usageErrorsExit64(_ arguments: [String]) throws {
        let r = try BitflashBinary.run(arguments)
        #expect(r.status == 64, "\(arguments): \(r.stderr)")
        #expect(!r.stderr.isEmpty)
    }

    @Test func aTraceRecordsEveryBoardAndTraceShowPrintsIt() throws {
        let file = state.appendingPathComponent("run.trace")
        let r = try flash("sample-r1-counter.hex", ["--boards", "2", "--trace", file.path])
        #expect(r.status == 0, "\(r.stderr)")
        let shown = try BitflashBinary.lab(["trace", "show", file.path])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("boards: sim-1, sim-2"), "\(shown.stdout.suffix(300))")
        #expect(shown.lines.contains { $0.contains("sim-1") && $0.contains("write") })
        #expect(shown.lines.contains { $0.contains("sim-2") && $0.contains("notify") })
        let only = try BitflashBinary.lab(["trace", "show", file.path, "--board", "sim-2", "--kind", "report"])
        let body = only.lines.dropLast()
        #expect(!body.isEmpty && body.allSatisfy { $0.contains("sim-2") && $0.contains("report") })
    }

    @Test func traceShowRefusesAFileThatIsNoTrace() throws {
        let file = state.appendingPathComponent("not-a-trace.txt")
        try Data("hello\n".utf8).write(to: file)
        let r = try BitflashBinary.lab(["trace", "show", file.path])
        #expect(r.status == 65)
        #expect(r.stderr.contains("not-a-trace.txt:1: not a bitflash trace line"))
    }
}
