import FirmwareImage
import Foundation
import SimulatedBoard
import Testing
import TestSupport

/// `bitflash scan`, `info --device` and `flash --device`, run as the built binary against the
/// fake org.bluez (`bitflash-lab sim bluez`) on a private dbus-daemon.
@Suite(
    .serialized,
    .enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct BlueZCommandTests {
    static func sample(_ name: String) -> URL { Bitflash.samples.appendingPathComponent(name) }

    static func json(_ r: Bitflash.Result) throws -> [[String: Any]] {
        try r.lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    static func result(_ r: Bitflash.Result) throws -> [String: Any] {
        try #require(try json(r).last { $0["type"] as? String == "result" })
    }

    /// The saved board's application region holds `file`'s image, byte for byte.
    static func expectBoardHolds(_ file: String, stateFile: URL) throws {
        let board = try SimulatedBoard.load(from: stateFile)
        let firmware = try Firmware.parse(Array(try Data(contentsOf: sample(file))), fileName: file)
        let image = try firmware.image(for: board.profile.board)
        let layout = board.profile.board.family.layout
        let end = try #require(image.slice(layout.applicationStart..<layout.scratchPage).span?.upperBound)
        #expect(try board.readFlash(layout.applicationStart..<end) == image.read(layout.applicationStart..<end))
        #expect(!board.flashIncomplete)
    }

    @Test("scan lists the board with its name, address, RSSI, mode and bond, and nothing else")
    func scan() async throws {
        let fake = try FakeBlueZProcess()
        let r = try await fake.bitflashAsync(["scan", "--timeout", "1", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let boards = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        let board = try #require(boards.first)
        #expect(boards.count == 1)
        #expect(Set(board.keys) == ["name", "address", "rssi", "mode", "bonded"])
        #expect(board["address"] as? String == FakeBlueZProcess.address)
        #expect(board["name"] as? String == FakeBlueZProcess.name)
        #expect(board["rssi"] as? Int == -60)
        // Pairing mode or an open build's program: the advertisement does not tell.
        #expect(board["mode"] as? String == "unknown")
        #expect(board["bonded"] as? Bool == false)
        let text = try await fake.bitflashAsync(["scan", "--timeout", "1"])
        #expect(
            text.stdout.contains("BBC micro:bit [zotig]         F0:0D:00:00:00:01  -60   unknown      no"),
            "\(text.stdout)")
        let all = try await fake.bitflashAsync(["scan", "--timeout", "1", "--all"])
        #expect(all.status == 0 && all.stdout.contains("F0:0D:00:00:00:01"), "\(all.stderr)")
    }

    @Test("info reads the mode, memory map and image slots of the board, as info --simulate shows them")
    func info() async throws {
        let fake = try FakeBlueZProcess()
        let r = try await fake.bitflashAsync(["info", "--device", "zotig", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(shown["address"] as? String == FakeBlueZProcess.address)
        #expect(shown["board"] as? String == "microbit-v2")
        #expect(shown["mode"] as? String == "application")
        #expect(shown["simulatorState"] == nil)
        let regions = try #require(shown["regions"] as? [[String: Any]])
        #expect(regions.map { $0["start"] as? String } == ["0x0001C000", "0x00047000"])
        let slots = try #require(shown["slots"] as? [[String: Any]])
        #expect(slots.first?["active"] as? Bool == true)
        // The same board read by the simulator gives the same regions.
        let state = fake.stop()
        let sim = try await Bitflash.runAsync(
            ["info", "--simulate", "--sim-state", state.deletingLastPathComponent().path, "--json"],
            bus: fake.bus.address)
        let simShown = try #require(try JSONSerialization.jsonObject(with: Data(sim.stdout.utf8)) as? [String: Any])
        #expect(
            (simShown["regions"] as? [[String: Any]])?.map { $0["hash"] as? String }
                == regions.map { $0["hash"] as? String })
    }

    @Test("an edited program is flashed partially, and the board holds the file byte for byte")
    func partialFlash() async throws {
        let fake = try FakeBlueZProcess()
        let r = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", FakeBlueZProcess.address, "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let result = try Self.result(r)
        #expect(result["path"] as? String == "partial")
        #expect(result["verified"] as? Bool == true)
        #expect(result["board"] as? String == FakeBlueZProcess.address)
        let phases = try Self.json(r).compactMap { $0["phase"] as? String }
        #expect(phases.contains("switching to pairing mode") && phases.contains("partial") && phases.last == "done")
        try Self.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }

    @Test(
        "a new runtime on an MCUboot board is a full DFU over McuMgr, byte for byte (with and without BlueZ's GATT cache)",
        arguments: [[], ["--gatt-cache"]])
    func fullDFU(cache: [String]) async throws {
        let fake = try FakeBlueZProcess(["--time-scale", "0.2"] + cache)
        let r = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r2-heart.hex").path, "--device", "zotig", "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let result = try Self.result(r)
        #expect(result["path"] as? String == "full")
        #expect(result["fallback"] as? Bool == false)
        #expect((result["reason"] as? [String: Any])?["code"] as? String == "runtime-differs")
        try Self.expectBoardHolds("sample-r2-heart.hex", stateFile: fake.stop())
    }

    @Test(
        "when partial flashing fails, auto mode falls back to a full update; a board that cannot be read back exits 2")
    func autoFallback() async throws {
        let fake = try FakeBlueZProcess(["--firmware-hostile", "truncated-notifications", "--time-scale", "0.2"])
        let r = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig", "--json"
        ])
        // The full update is written, but the board's partial-flashing answers stay truncated, so
        // it cannot be read back in application mode: written, not verified (2), not 3.
        #expect(r.status == 2, "\(r.stderr)")
        let result = try Self.result(r)
        #expect(result["path"] as? String == "full")
        #expect(result["fallback"] as? Bool == true)
        #expect(result["verification"] as? String == "unverified")
        #expect((result["verificationNote"] as? String)?.isEmpty == false)
        #expect((result["reason"] as? [String: Any])?["code"] as? String == "partial-failed")
        try Self.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }

    @Test(
        "a board that needs a bond is put in pairing mode, paired (Just Works), flashed, and verified in its program, which then advertises to its bonded host only"
    )
    func pairing() async throws {
        let fake = try FakeBlueZProcess(["--requires-pairing", "--in-pairing-mode"])
        let r = try await fake.bitflashAsync(["flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("[runtime-matches]") && r.stdout.contains("zotig: partial, "), "\(r.stdout)")
        // Back in its program, the whitelisted build advertises its bare name, not discoverable.
        let scan = try await fake.bitflashAsync(["scan", "--timeout", "1", "--json"])
        let boards = try #require(try JSONSerialization.jsonObject(with: Data(scan.stdout.utf8)) as? [[String: Any]])
        #expect(boards.first?["name"] as? String == "BBC micro:bit")
        #expect(boards.first?["mode"] as? String == "application")
        #expect(boards.first?["bonded"] as? Bool == true)
        try Self.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }

    @Test("a refused pairing says so and exits 77; with --no-pair, so does a board that needs a bond")
    func pairingRefused() async throws {
        let fake = try FakeBlueZProcess(["--requires-pairing", "--refuses-pairing", "--in-pairing-mode"])
        let r = try await fake.bitflashAsync(["flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig"])
        #expect(r.status == 77)
        #expect(r.stderr.contains("pairing refused by BBC micro:bit [zotig] (F0:0D:00:00:00:01)"))
        #expect(r.stderr.contains("bitflash forget F0:0D:00:00:00:01"))
        let info = try await fake.bitflashAsync(["info", "--device", "zotig"])
        #expect(info.status == 77, "\(info.stderr)")
        let unpaired = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig", "--no-pair"
        ])
        #expect(unpaired.status == 77)
        #expect(unpaired.stderr.contains("the board requires a bond, and pairing is turned off"))
    }

    @Test("a link lost in the middle of partial flashing is recovered, and the board is complete")
    func disconnectMidFlash() async throws {
        let fake = try FakeBlueZProcess(["--disconnect-after-writes", "60"])
        let r = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig", "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let result = try Self.result(r)
        #expect(result["path"] as? String == "partial")
        #expect(try Self.json(r).contains { $0["type"] as? String == "retry" })
        try Self.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }

    @Test("connect failures BlueZ asks to retry (InProgress, abort-by-local) are retried")
    func connectRetries() async throws {
        let fake = try FakeBlueZProcess(["--connect-failures", "in-progress,le-connection-abort-by-local"])
        let r = try await fake.bitflashAsync(["info", "--device", "zotig"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("mode:           application"))
    }

    @Test("an absent board exits 69 and says what to check")
    func absent() async throws {
        let fake = try FakeBlueZProcess(["--absent"])
        let r = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig", "--scan-timeout", "1"
        ])
        #expect(r.status == 69)
        #expect(r.stderr.contains("no board 'zotig' in range"))
        #expect(r.stderr.contains("pairing mode"))
    }

    @Test("services that never resolve exit 76 with advice")
    func servicesNeverResolve() async throws {
        let fake = try FakeBlueZProcess(["--services-never-resolve"])
        let r = try await fake.bitflashAsync(["info", "--device", "zotig", "--connect-timeout", "1"])
        #expect(r.status == 76)
        #expect(r.stderr.contains("connected but its services never resolved within 1s"))
        #expect(r.stderr.contains("bitflash forget F0:0D:00:00:00:01"))
    }

    @Test("one board named twice, by its name and by its address, is flashed once; the other query is told why (64)")
    func oneBoardNamedTwiceIsFlashedOnce() async throws {
        let fake = try FakeBlueZProcess()
        let r = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig", "--device", "F0:0D:00:00:00:01",
            "--json"
        ])
        #expect(r.status == 64, "\(r.stderr)")
        let results = try Self.json(r).filter { $0["type"] as? String == "result" }
        #expect(results.count == 2, "\(r.stdout)")
        let flashed = results.filter { $0["verified"] as? Bool == true }
        let refused = results.filter { ($0["error"] as? String)?.contains("already names") == true }
        #expect(flashed.count == 1 && refused.count == 1, "\(results)")
        #expect(refused.first?["bytesSent"] as? Int == 0)
        #expect(r.stderr.contains("each board is flashed once"), "\(r.stderr)")
        try Self.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }

    @Test("several --device flags flash the boards in parallel, a line each and a summary table")
    func severalBoards() async throws {
        let fake = try FakeBlueZProcess(
            scenario: """
                {"boards": [{"name": "BBC micro:bit [zotig]", "address": "F0:0D:00:00:00:01"},
                            {"name": "BBC micro:bit [vavit]", "address": "F0:0D:00:00:00:02", "profile": "microbit-v2"}]}
                """)
        let r = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig", "--device", "vavit"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        // The class report names each board by what it advertises and its address.
        #expect(
            r.lines.contains { $0.hasPrefix("zotig  BBC micro:bit [zotig]  F0:0D:00:00:00:01  ok      partial") },
            "\(r.stdout)")
        #expect(r.lines.contains { $0.hasPrefix("vavit  BBC micro:bit [vavit]  F0:0D:00:00:00:02  ok      partial") })
        #expect(r.stdout.contains("2 of 2 boards flashed"))
        // Every board in range, found by the scan: both already run the file.
        let again = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--all-in-range", "--scan-timeout", "1", "--json"
        ])
        #expect(again.status == 0, "\(again.stderr)")
        let results = try Self.json(again).filter { $0["type"] as? String == "result" }
        #expect(Set(results.compactMap { $0["board"] as? String }) == ["F0:0D:00:00:00:01", "F0:0D:00:00:00:02"])
        #expect(results.allSatisfy { $0["path"] as? String == "up-to-date" })
        fake.stop()
        for state in ["sim-1", "sim-2"] {
            try Self.expectBoardHolds(
                "sample-r1-counter.hex", stateFile: fake.state.appendingPathComponent("\(state).json"))
        }
    }

    @Test(
        "hostile D-Bus replies give a short, clear error and a failure exit code, never a crash",
        arguments: ["wrong-types", "oversized-values", "missing-properties"])
    func hostileBlueZ(mode: String) async throws {
        let fake = try FakeBlueZProcess(["--hostile", mode])
        let r = try await fake.bitflashAsync([
            "info", "--device", FakeBlueZProcess.address, "--scan-timeout", "1", "--connect-timeout", "2"
        ])
        #expect([69, 74, 76].contains(r.status), "\(mode): exit \(r.status) \(r.stderr.prefix(300))")
        #expect(r.stderr.hasPrefix("bitflash: error: "), "\(mode)")
        #expect(r.stderr.count < 1000, "\(mode): \(r.stderr.count) characters of error")
        if mode == "oversized-values" { #expect(r.stderr.contains("cannot come from a board"), "\(r.stderr)") }
        let scan = try await fake.bitflashAsync(["scan", "--timeout", "1"])
        #expect(scan.status == 0, "\(mode): \(scan.stderr)")
        #expect(scan.lines.allSatisfy { $0.count < 400 }, "\(mode)")
    }

    @Test(
        "a flash that meets a D-Bus value BlueZ never sends ends with 76 and says it is not a radio problem",
        arguments: ["oversized-values", "wrong-types", "missing-properties"])
    func stackViolationEndsFlash(mode: String) async throws {
        let fake = try FakeBlueZProcess(["--hostile", mode])
        let r = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", FakeBlueZProcess.address,
            "--scan-timeout", "2", "--json"
        ])
        #expect(r.status == 76, "\(mode): exit \(r.status) \(r.stderr.prefix(400))")
        #expect(r.stderr.contains("not a radio problem"), "\(mode): \(r.stderr.prefix(400))")
        #expect(r.stderr.contains("running again does not help"), "\(mode)")
        #expect(
            !r.stderr.contains("closer") && !r.stderr.contains("run the same command again"),
            "\(mode): \(r.stderr.prefix(400))")
        #expect(r.stderr.count < 1000, "\(mode): \(r.stderr.count) characters of error")
        // The oversized notifications are the board's answers: the run ends at the first one.
        if mode == "oversized-values" { #expect(r.stderr.contains("4096 bytes"), "\(r.stderr.prefix(400))") }
    }

    @Test(
        "a board that forgot its bond is diagnosed, `bitflash forget` removes the bond, and the next flash pairs afresh"
    )
    func staleBondIsDiagnosedAndForgotten() async throws {
        let fake = try FakeBlueZProcess(["--stale-bond"])
        let r = try await fake.bitflashAsync(["info", "--device", "zotig"])
        #expect(r.status == 74)
        #expect(r.stderr.contains("the board forgot this computer"), "\(r.stderr)")
        #expect(r.stderr.contains("run `bitflash forget F0:0D:00:00:00:01`"), "\(r.stderr)")
        let forget = try await fake.bitflashAsync(["forget", "F0:0D:00:00:00:01"])
        #expect(forget.status == 0, "\(forget.stderr)")
        #expect(
            forget.stdout.contains("forgot") && forget.stdout.contains("F0:0D:00:00:00:01")
                && forget.stdout.contains("its bond"))
        let flash = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig", "--json"
        ])
        #expect(flash.status == 0, "\(flash.stderr)")
        #expect(try Self.result(flash)["path"] as? String == "partial")
        try Self.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }

    @Test("forget on a board BlueZ does not know exits 69 and lists the boards it knows")
    func forgetUnknownBoard() async throws {
        let fake = try FakeBlueZProcess()
        _ = try await fake.bitflashAsync(["scan", "--timeout", "1"])
        let r = try await fake.bitflashAsync(["forget", "AA:BB:CC:DD:EE:FF"])
        #expect(r.status == 69, "\(r.stderr)")
        #expect(r.stderr.contains("AA:BB:CC:DD:EE:FF") && r.stderr.contains("zotig"), "\(r.stderr)")
    }

    /// A killed run leaves its record, and the next run checks it against the board. The fake's
    /// board does not reboot when its client vanishes, so it still reports its old program hash;
    /// the record does not describe that state, and the flash starts over (safely) with a note.
    @Test(
        "a flash killed mid-way leaves a resume record; the next run checks it against the board and finishes byte-exact"
    )
    func killedFlashIsContinued() async throws {
        let fake = try FakeBlueZProcess()
        let state = fake.bus.directory.appendingPathComponent("bitflash-state")
        let file = Self.sample("sample-r1-counter.hex").path
        // The first run is killed (SIGKILL, as a crash) once 100 of the 130 blocks are acknowledged:
        // past the first 4 KiB page (64 blocks), so the saved point is the start of the second page.
        let p = Process()
        p.executableURL = Bitflash.url
        p.arguments = ["flash", file, "--device", "zotig", "--json"]
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = fake.bus.address
        env["BITFLASH_STATE"] = state.path
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Read and wait on a thread of its own, not one of the few the tests' async code runs on.
        let killed = try await FakeBlueZProcess.offPool { [out] in
            var buffer = Data(), killed = false
            reading: while true {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = buffer[buffer.startIndex..<newline]
                    buffer = Data(buffer[(newline + 1)...])
                    guard let event = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                        event["type"] as? String == "progress", let done = event["done"] as? Int
                    else { continue }
                    if done >= (event["unit"] as? String == "blocks" ? 100 : 100 * 64) {
                        kill(p.processIdentifier, SIGKILL)
                        killed = true
                        break reading
                    }
                }
            }
            p.waitUntilExit()
            return killed
        }
        try #require(killed, "the first run ended before 100 blocks")
        let saved = try FileManager.default.contentsOfDirectory(atPath: state.appendingPathComponent("resume").path)
        #expect(saved == ["F0_0D_00_00_00_01.json"], "\(saved)")
        // The next run continues the unfinished write.
        let again = try await Bitflash.offPoolRun(
            ["flash", file, "--device", "zotig", "--json"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address, "BITFLASH_STATE": state.path])
        #expect(again.status == 0, "\(again.stdout.suffix(600)) \(again.stderr)")
        let result = try Self.result(again)
        #expect(result["path"] as? String == "partial")
        let details = (result["reason"] as? [String: Any])?["details"] as? [String: Any]
        let notes = again.stdout.split(separator: "\n").filter {
            $0.contains("\"note\"") || $0.contains("\"decision\"")
        }
        if let at = details?["resumedAtBlock"] as? Int {
            #expect(at == 65, "continued at the start of the second page: \(result)")
        } else {
            #expect(notes.contains { $0.contains("not continuing the earlier unfinished write") }, "\(notes)")
        }
        // The resume record is gone; the finish record (this computer finished the program) stays.
        #expect(
            (try? FileManager.default.contentsOfDirectory(atPath: state.appendingPathComponent("resume").path))?
                .filter { $0 != "finished" } ?? [] == [],
            "a finished flash forgets its record")
        #expect(
            (try? FileManager.default.contentsOfDirectory(
                atPath: state.appendingPathComponent("resume/finished").path))?.count == 1,
            "and keeps that it finished the program")
        try Self.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }

    @Test(
        "a partial flash goes through the sockets of AcquireWrite/AcquireNotify where BlueZ grants them, through WriteValue and PropertiesChanged where not, and changes over when the sockets close",
        arguments: [[], ["--refuses-acquire"], ["--acquired-sockets-close-after", "60"]])
    func acquirePaths(options: [String]) async throws {
        let fake = try FakeBlueZProcess(options)
        let r = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig", "--json"
        ])
        #expect(r.status == 0, "\(options): \(r.stderr)")
        #expect(try Self.result(r)["path"] as? String == "partial")
        try Self.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
        let t = try #require(fake.traffic, "\(fake.printed.suffix(500))")
        let (socketWrites, valueWrites, socketNotifications, signalNotifications) = (t[0], t[2], t[3], t[5])
        switch options.first {
        case nil:
            #expect(socketWrites > 500 && valueWrites == 0, "\(t)")
            #expect(socketNotifications > 100 && signalNotifications == 0, "\(t)")
        case "--refuses-acquire":
            #expect(socketWrites == 0 && valueWrites > 500, "\(t)")
            #expect(socketNotifications == 0 && signalNotifications > 100, "\(t)")
        default:
            #expect(socketWrites >= 60 && valueWrites > 100, "\(t)")
            #expect(socketNotifications > 0 && signalNotifications > 0, "\(t)")
        }
    }

    @Test(
        "BITFLASH_BLUEZ_ACQUIRE=0 keeps bitflash on WriteValue and PropertiesChanged although BlueZ would grant the sockets"
    )
    func acquireTurnedOff() async throws {
        let fake = try FakeBlueZProcess()
        let r = try await Bitflash.offPoolRun(
            ["flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig", "--json"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address, "BITFLASH_BLUEZ_ACQUIRE": "0"])
        #expect(r.status == 0, "\(r.stderr)")
        try Self.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
        let t = try #require(fake.traffic)
        #expect(t[1] == 0 && t[4] == 0, "no socket was asked for: \(t)")
        #expect(t[2] > 500 && t[5] > 100, "\(t)")
    }

    @Test("a dry run over BlueZ prints the plan with its estimates and writes nothing")
    func dryRunWritesNothing() async throws {
        let fake = try FakeBlueZProcess()
        let r = try await fake.bitflashAsync([
            "flash", Self.sample("sample-r1-counter.hex").path, "--device", "zotig", "--dry-run", "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let plan = try #require(try Self.json(r).first { $0["type"] as? String == "plan" })
        #expect(plan["path"] as? String == "partial")
        #expect((plan["blocks"] as? Int ?? 0) > 0)
        #expect(plan["decision"] != nil)
        // The board still holds the sample it started with.
        try Self.expectBoardHolds("sample-r1-heart.hex", stateFile: fake.stop())
    }

    @Test("no bluetoothd on the bus exits 75 and says how to start it")
    func noBluetoothd() async throws {
        let bus = try PrivateBus()
        let r = try await Bitflash.runAsync(["scan", "--timeout", "1"], bus: bus.address)
        #expect(r.status == 75)
        #expect(r.stderr.contains("bluetoothd is not running"))
        #expect(r.stderr.contains("systemctl start bluetooth"))
    }
}
