import Foundation
import Testing
import TestSupport

/// Values with a piece missing are refused with the option's name (exit 64), not read as some
/// other value; and a board stopped by `--sim-kill-at` is told what stopped it.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct MalformedValueTests {
    @Test("a --range with a sign or an empty end is refused, not read as another range")
    func aRangeWithAnEmptyPartIsRefused() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let input = BitflashBinary.sample("sample-r1-heart.hex").path
        for range in ["-5-6", "5-6-", "5--6", "0x18000-", "-0x18000", "0x18000-0x20000-0x30000"] {
            let out = dir.appendingPathComponent("x.bin")
            let r = try BitflashBinary.run([
                "convert", input, "--board", "microbit-v1", "--to", "bin", "--range", range, "-o", out.path
            ])
            #expect(r.status == 64, "\(range): \(r.stdout)\(r.stderr)")
            #expect(r.stderr.contains("--range \(range): expected START-END"), "\(range): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out.path))
        }
        // A well-formed range still converts.
        let good = try BitflashBinary.run([
            "convert", input, "--board", "microbit-v1", "--to", "bin", "--range", "0x18000-0x18400",
            "-o", dir.appendingPathComponent("good.bin").path
        ])
        #expect(good.status == 0, "\(good.stderr)")
    }

    @Test("a --sim-adapter with an empty name or count is refused, not read as a bare count")
    func anAdapterWithAnEmptyPartIsRefused() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let file = BitflashBinary.sample("sample-r1-heart.hex").path
        for adapter in [":3", "csr8510:", "3:", ":", "+3", "csr8510:+2"] {
            let state = dir.appendingPathComponent("s")
            let r = try BitflashBinary.run([
                "flash", file, "--simulate", "microbit-v2", "--sim-state", state.path, "--sim-adapter", adapter
            ])
            #expect(r.status == 64, "\(adapter): \(r.stdout)\(r.stderr)")
            #expect(r.stderr.contains("--sim-adapter"), "\(adapter): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: state.path), "\(adapter)")
        }
        let good = try BitflashBinary.run([
            "flash", file, "--simulate", "microbit-v2", "--sim-state", dir.appendingPathComponent("g").path,
            "--sim-adapter", "csr8510:2", "--boards", "2"
        ])
        #expect(good.status == 0, "\(good.stderr)")
    }

    @Test("a board stopped by --sim-kill-at is told to run the command again, not to come nearer")
    func aKilledBoardIsNotToldToComeNearer() throws {
        let state = try BitflashBinary.temporaryDirectory()
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let base = ["--simulate", "microbit-v2", "--sim-state", state.path, "--boards", "2"]
        let killed = try BitflashBinary.lab(["flash", file, "--sim-kill-at", "0.5"] + base)
        #expect(killed.status == 74, "\(killed.stdout)\(killed.stderr)")
        let rows = killed.lines.filter { $0.hasPrefix("sim-") }
        #expect(rows.count == 2, "\(killed.stdout)")
        for row in rows {
            #expect(row.contains("FAILED"), "\(row)")
            #expect(!row.contains("nearer"), "\(row)")
            #expect(
                row.contains("stopped by --sim-kill-at: run the same command again, or with --retry-failed"), "\(row)")
        }
    }
}

/// A file whose name is not UTF-8 (the shell passes its bytes as they are) is refused with what its
/// name holds, not reported missing under the name Swift would make of it.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct NonUTF8ArgumentTests {
    @Test func aFileNameThatIsNotUTF8IsNamedByItsBytes() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let sample = try Data(contentsOf: BitflashBinary.sample("sample-r1-heart.hex"))
        // The name's bytes: "\xFF.hex", written through the shell, which keeps them.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        let err = Pipe()
        shell.arguments = [
            "-c",
            #"cp "$1" "$2/$(printf '\377').hex" && exec "$0" flash "$2/$(printf '\377').hex" --simulate --sim-state "$2/s""#,
            try #require(BitflashBinary.url).path, BitflashBinary.sample("sample-r1-heart.hex").path, dir.path
        ]
        shell.standardError = err
        shell.standardOutput = FileHandle.nullDevice
        try shell.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        #expect(sample.count > 0)
        #expect(shell.terminationStatus == 64, "\(text)")
        #expect(text.contains(#"\xFF.hex) is not UTF-8 text"#), "\(text)")
        #expect(!text.contains("no such file"), "\(text)")
    }

    @Test("one board named twice with --device is refused (64) before any bus is asked, not flashed twice")
    func aDeviceNamedTwiceIsRefused() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let r = try BitflashBinary.run(
            ["flash", file, "--device", "zotig", "--device", "ZOTIG"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bitflash-test-bus"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("--device ZOTIG is given twice"), "\(r.stderr)")
    }
}
