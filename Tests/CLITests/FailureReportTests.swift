import Foundation
import Testing
import TestSupport

/// How failures end: one clear line on stderr for every failure (also with `--json`), and the
/// same exit code for the same problem from every command.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct FailureReportTests {
    let dir: URL
    init() throws { dir = try BitflashBinary.temporaryDirectory() }

    /// An Intel HEX file whose only data is in the UICR: no MakeCode program, no application.
    func uicrOnlyFile() throws -> URL {
        let file = dir.appendingPathComponent("uicr-only.hex")
        try ":020000041000EA\n:041014000070070061\n:00000001FF\n".write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test(
        "a file with no program and no application is the file's problem: 65 from plan and from every kind of flash, board untouched"
    )
    func noApplicationImageIs65Everywhere() throws {
        let file = try uicrOnlyFile().path
        let state = dir.appendingPathComponent("state").path
        for arguments in [
            ["plan", file],
            ["flash", file, "--simulate", "--sim-state", state],
            ["flash", file, "--simulate", "--sim-state", state, "--json"],
            ["flash", file, "--simulate", "--sim-state", state, "--dry-run"],
            ["flash", file, "--simulate", "microbit-v2", "--sim-state", state, "--boards", "3"],
            ["flash", file, "--udp", "127.0.0.1:9"]
        ] {
            let r = try BitflashBinary.run(arguments)
            #expect(r.status == 65, "\(arguments): \(r.status) \(r.stdout) \(r.stderr)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix("bitflash: error: \(file):"), "\(arguments): \(r.stderr)")
            #expect(
                r.stderr.contains("neither path can write this file")
                    || r.stderr.contains("no MCUboot image can be made"),
                "\(arguments): \(r.stderr)")
        }
        // Refused before any board was made or touched.
        #expect(!FileManager.default.fileExists(atPath: state + "/sim.json"))
    }

    @Test("a simulated flash that fails prints one line per failed board on stderr, with and without --json")
    func simulatedFailureIsOneLineOnStderr() throws {
        let state = dir.appendingPathComponent("state").path
        let file = BitflashBinary.sample("sample-r2-heart.hex").path
        for json in [false, true] {
            let one = try BitflashBinary.lab(
                ["flash", file, "--simulate", "--sim-state", state, "--sim-kill-at", "1"] + (json ? ["--json"] : []))
            #expect(one.status == 74)
            #expect(
                one.stderr.split(separator: "\n").map(String.init)
                    == [
                        "bitflash: error: bitflash was stopped at 1.0 s (modelled, --sim-kill-at) as if killed; the board keeps what it received: "
                            + "run the same command again to continue"
                    ], "\(one.stderr)")
            let set = try BitflashBinary.lab(
                [
                    "flash", file, "--simulate", "--sim-state", state, "--boards", "2", "--sim-kill-at", "1",
                    "--no-resume"
                ] + (json ? ["--json"] : []))
            #expect(set.status == 74)
            let lines = set.stderr.split(separator: "\n")
            #expect(
                lines.count == 2 && lines[0].hasPrefix("bitflash: error: sim-1: ")
                    && lines[1].hasPrefix("bitflash: error: sim-2: "),
                "\(set.stderr)")
            if json {
                // Standard output stays JSON lines only.
                for line in set.stdout.split(separator: "\n") {
                    #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "\(line)")
                }
            }
        }
    }

    @Test("a dry run that cannot plan says why on stderr")
    func dryRunFailureOnStderr() throws {
        let state = dir.appendingPathComponent("state").path
        let reset = try BitflashBinary.run(["sim", "reset", "--profile", "microbit-v2", "--sim-state", state])
        #expect(reset.status == 0, "\(reset.stderr)")
        // A stock board without McuMgr, a new runtime and `--full-path mcumgr`: no path.
        let r = try BitflashBinary.run([
            "flash", BitflashBinary.sample("sample-r2-heart.hex").path, "--simulate", "microbit-v2",
            "--sim-state", state, "--dry-run", "--full-path", "mcumgr", "--json"
        ])
        #expect(r.status == 74, "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.hasPrefix("bitflash: error: ") && r.stderr.contains("McuMgr"), "\(r.stderr)")
    }

    @Test("sim bluez: a malformed Bluetooth address is a bad command line (64), on the command line and in a scenario")
    func malformedAddressIs64() throws {
        let options = try BitflashBinary.lab([
            "sim", "bluez", "--address", "ZZ:ZZ", "--bus", "unix:path=/nonexistent", "--sim-state", dir.path
        ])
        #expect(options.status == 64, "\(options.stderr)")
        #expect(
            options.stderr.contains("'--address") && options.stderr.contains("six hexadecimal bytes"),
            "\(options.stderr)")
        let scenario = dir.appendingPathComponent("scenario.json")
        try #"{"boards": [{"address": "ZZ:ZZ"}]}"#.write(to: scenario, atomically: true, encoding: .utf8)
        let file = try BitflashBinary.lab([
            "sim", "bluez", "--scenario", scenario.path, "--bus", "unix:path=/nonexistent", "--sim-state", dir.path
        ])
        #expect(file.status == 64, "\(file.stderr)")
        #expect(file.stderr.contains("'ZZ:ZZ' is not a Bluetooth address"), "\(file.stderr)")
    }

    @Test("a board whose file cannot be saved still ends --json with its result, which says so (73)")
    func anUnsavedBoardStillHasAResult() throws {
        let state = dir.appendingPathComponent("unsaved").path
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        // A board's file is about 440 KB: a 200 KB file-size limit lets the run go and fails the save.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = [
            "-c", "ulimit -f 200; exec \"$0\" \"$@\"", try #require(BitflashBinary.url).path, "flash", file,
            "--simulate", "--sim-state", state, "--json"
        ]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 73)
        let objects = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let result = try #require(objects.last { $0["type"] as? String == "result" }, "\(text.suffix(500))")
        let error = try #require(result["error"] as? String)
        #expect(error.contains("could not be saved"), "\(error)")
        #expect(result["verified"] as? Bool == false || result["verified"] == nil)
        // A result with an error is a failure (docs/json-and-exit-codes.md, "The result").
        #expect(result["verification"] as? String == "failed", "\(result)")
        #expect(result["verificationNote"] == nil, "\(result)")
    }
}
