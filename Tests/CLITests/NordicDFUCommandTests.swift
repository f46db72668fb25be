import FirmwareImage
import Foundation
import SampleFirmware
import Testing
import TestSupport

/// Stock simulated boards from the command line: their Nordic bootloader takes the full update.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct NordicDFUCommandTests {
    func result(_ r: BitflashBinary.Result) throws -> [String: Any] {
        let objects = try r.lines.compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return try #require(objects.last { $0["type"] as? String == "result" })
    }

    func applicationHash(_ state: URL) throws -> String {
        let show = try BitflashBinary.run(["sim", "show", "--json", "--sim-state", state.path])
        let boards = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [[String: Any]])
        return try #require(boards.first?["applicationSHA256"] as? String)
    }

    /// The application region of a board that was given `file` directly.
    func referenceHash(_ file: String, profile: String) throws -> String {
        let reference = try BitflashBinary.temporaryDirectory()
        let r = try BitflashBinary.run([
            "sim", "reset", "--profile", profile, "--from", file, "--sim-state", reference.path
        ])
        #expect(r.status == 0, "\(r.stderr)")
        return try applicationHash(reference)
    }

    /// The sample runtime r2 with the counter program, as an Intel HEX for one board family.
    func r2Counter(_ family: ChipFamily, in dir: URL) throws -> String {
        let url = dir.appendingPathComponent("r2-counter-\(family.rawValue).hex")
        let image = SampleFirmware.image(family: family, runtime: .r2, program: .counter)
        try Data(IntelHexWriter.write(image)).write(to: url)
        return url.path
    }

    @Test(
        "New runtime goes full by Nordic DFU, an edit partial, the same file up to date; byte-exact each time",
        arguments: ["microbit-v2", "microbit-v1", "calliope-mini-3", "calliope-mini-2"])
    func story(profile: String) throws {
        let state = try BitflashBinary.temporaryDirectory()
        let board = try #require(Board(rawValue: profile))
        let reset = try BitflashBinary.run(["sim", "reset", "--profile", profile, "--sim-state", state.path])
        #expect(reset.status == 0, "\(reset.stderr)")
        let newRuntime = BitflashBinary.sample("sample-r2-heart.hex").path
        let edit = try r2Counter(board.family, in: state)
        let steps: [(file: String, path: String)] = [(newRuntime, "full"), (edit, "partial"), (edit, "up-to-date")]
        for step in steps {
            let r = try BitflashBinary.run([
                "flash", step.file, "--simulate", profile, "--sim-state", state.path, "--json"
            ])
            #expect(r.status == 0, "\(r.stderr)")
            let object = try result(r)
            #expect(object["path"] as? String == step.path)
            #expect(object["verified"] as? Bool == true)
            if step.path == "full" {
                #expect(object["fullPath"] as? String == "nordic")
                #expect((object["reason"] as? [String: Any])?["code"] as? String == "runtime-differs")
                let message = (object["reason"] as? [String: Any])?["message"] as? String ?? ""
                #expect(message.contains(board.family == .nrf51 ? "Nordic legacy DFU" : "Nordic Secure DFU"))
            }
            #expect(
                try applicationHash(state) == referenceHash(step.file, profile: profile),
                "\(profile) after \(step.path)")
        }
    }

    @Test(
        "A board stuck in DfuTarg is shown as such, refuses info, and is recovered by flashing a file",
        arguments: ["microbit-v2", "microbit-v1"])
    func recovery(profile: String) throws {
        let state = try BitflashBinary.temporaryDirectory()
        let reset = try BitflashBinary.run([
            "sim", "reset", "--profile", profile, "--stuck-in-bootloader", "--sim-state", state.path
        ])
        #expect(reset.status == 0, "\(reset.stderr)")
        let show = try BitflashBinary.run(["sim", "show", "--sim-state", state.path])
        #expect(show.stdout.contains("bootloader (DfuTarg)"))
        let info = try BitflashBinary.run(["info", "--simulate", profile, "--sim-state", state.path])
        #expect(info.status == 69)
        #expect(info.stderr.contains("Nordic bootloader"))

        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let r = try BitflashBinary.run(["flash", file, "--simulate", profile, "--sim-state", state.path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try result(r)
        #expect(object["path"] as? String == "full")
        #expect((object["reason"] as? [String: Any])?["code"] as? String == "in-bootloader")
        #expect(try applicationHash(state) == referenceHash(file, profile: profile))
        let again = try BitflashBinary.run(["flash", file, "--simulate", profile, "--sim-state", state.path, "--json"])
        #expect(try result(again)["path"] as? String == "up-to-date")
    }

    @Test("--full-path picks a path the board has, and explains a path it lacks")
    func fullPathOption() throws {
        let state = try BitflashBinary.temporaryDirectory()
        _ = try BitflashBinary.run(["sim", "reset", "--profile", "microbit-v2", "--sim-state", state.path])
        let file = BitflashBinary.sample("sample-r1-heart.hex").path
        let refused = try BitflashBinary.run([
            "flash", file, "--simulate", "microbit-v2", "--sim-state", state.path,
            "--mode", "full", "--full-path", "mcumgr"
        ])
        #expect(refused.status == 74)
        #expect(refused.stdout.contains("McuMgr") || refused.stderr.contains("McuMgr"))
        let forced = try BitflashBinary.run([
            "flash", file, "--simulate", "microbit-v2", "--sim-state", state.path,
            "--mode", "full", "--full-path", "nordic", "--json"
        ])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try result(forced)["fullPath"] as? String == "nordic")
        let bad = try BitflashBinary.run(["flash", file, "--simulate", "microbit-v2", "--full-path", "usb"])
        #expect(bad.status == 64)
        let mcuboot = try BitflashBinary.run([
            "sim", "reset", "--profile", "microbit-v2-mcuboot", "--stuck-in-bootloader",
            "--sim-state", state.path
        ])
        #expect(mcuboot.status == 64)
        #expect(mcuboot.stderr.contains("stock profile"))
    }
}
