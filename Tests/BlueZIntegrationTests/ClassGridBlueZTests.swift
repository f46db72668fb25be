import Foundation
import Testing
import TestSupport

/// The class grid of real boards, against the fake org.bluez: each board's name and address
/// reach the grid as the board's flash ends, with its result.
@Suite(.enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct ClassGridBlueZTests {
    /// The grid's lines as last drawn: the text after the last move up over the grid's rows, up
    /// to the class report, without its escape codes.
    static func lastPicture(_ stdout: String, rows: Int) throws -> [String] {
        let frames = stdout.components(separatedBy: "\u{1B}[\(rows)F")
        let last = try #require(frames.last)
        return last.components(separatedBy: "\n").prefix(rows).map {
            $0.replacing(#/\x1B\[[0-9;?]*[A-Za-z]/#, with: "").replacingOccurrences(of: "\r", with: "")
        }
    }

    @Test(
        "a class of two real boards on a terminal: a line each, the found board's name and address, the other's reason")
    func aRealClassOnATerminal() async throws {
        let fake = try FakeBlueZProcess(profile: "microbit-v2")
        let state = fake.bus.directory.appendingPathComponent("bitflash")
        let env = [
            "DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address, "BITFLASH_STATE": state.path, "BITFLASH_FORCE_TTY": "1",
            "COLUMNS": "160", "NO_COLOR": "1"
        ]
        let file = BlueZCommandTests.sample("sample-r1-counter.hex").path
        let run = try await Bitflash.offPoolRun(
            ["flash", file, "--device", "zotig", "--device", "F0:0D:00:00:00:99", "--scan-timeout", "1"],
            environment: env)
        #expect(run.status == 69, "\(run.stderr)")
        // Wide enough for every column (at 120 the advertised names go first).
        let picture = try Self.lastPicture(run.stdout, rows: 3)
        #expect(picture[0].hasPrefix("2 boards: 1 done, 1 failed, 0 flashing, 0 waiting; ended in "), "\(picture)")
        #expect(
            picture[1].contains(
                #/^zotig +BBC micro:bit \[zotig\]  F0:0D:00:00:00:01  partial +✔ verified, \d+\.\d+ s$/#),
            "\(picture)")
        #expect(picture[2].hasPrefix("F0:0D:00:00:00:99  "), "\(picture)")
        #expect(picture[2].contains("✘ failed: "), "\(picture)")
        #expect(picture.allSatisfy { $0.count < 160 })
        // The report and its hint follow, as in a pipe.
        #expect(run.stdout.contains("1 of 2 boards flashed, 1 failed: run the same command with --retry-failed"))
    }

    @Test("a mixed class of real boards: each line names the path its board took, partial and McuMgr")
    func aMixedClassNamesEachPath() async throws {
        // Two MCUboot boards: one runs the file's runtime (partial), one another runtime (McuMgr).
        let fake = try FakeBlueZProcess(scenario: ClassReportBlueZTests.mixedRuntimes)
        let file = BlueZCommandTests.sample("sample-r1-counter.hex").path
        let env = [
            "DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address, "BITFLASH_FORCE_TTY": "1", "COLUMNS": "100", "NO_COLOR": "1",
            "BITFLASH_STATE": fake.bus.directory.appendingPathComponent("bitflash").path
        ]
        let run = try await Bitflash.offPoolRun(
            ["flash", file, "--device", "zotig", "--device", "vavit", "--scan-timeout", "1"], environment: env)
        #expect(run.status == 0 || run.status == 3, "\(run.stderr)")
        let picture = try Self.lastPicture(run.stdout, rows: 3)
        #expect(picture[0].hasPrefix("2 boards: 2 done, 0 failed, 0 flashing, 0 waiting; ended in "), "\(picture)")
        #expect(picture[1].contains(#/^zotig  F0:0D:00:00:00:01  partial +[✔?] /#), "\(picture)")
        #expect(picture[2].contains(#/^vavit  F0:0D:00:00:00:02  McuMgr +[✔?] /#), "\(picture)")
        // While the McuMgr board uploaded, before its result (and its address, which comes with
        // it), its line said a full update: the estimate expects a mixed class, so not which one.
        let frames = run.stdout.components(separatedBy: "\r")
        #expect(
            frames.contains { $0.contains(#/^vavit  full +\[[█░]+\] +\d+%/#) }, "\(run.stdout)")
    }
}
