import Foundation
import Testing
import TestSupport

/// `sim reset/show/samples`, `info` and `convert`, run as subprocesses.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct SimAndInfoCommandTests {
    let state: URL
    init() throws { state = try BitflashBinary.temporaryDirectory() }

    func json(_ r: BitflashBinary.Result) throws -> Any { try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) }

    @Test func simResetFromAFileThenShowReportsItsProgramHash() throws {
        let inspect = try BitflashBinary.run([
            "inspect", "--json", "--board", "microbit-v2", BitflashBinary.sample("sample-r1-counter.hex").path
        ])
        let sections = try #require((try json(inspect) as? [String: Any])?["sections"] as? [[String: Any]])
        let programHash = try #require((sections.first?["makeCode"] as? [String: Any])?["programHash"] as? String)

        let reset = try BitflashBinary.run([
            "sim", "reset", "--profile", "microbit-v2", "--boards", "2", "--sim-state", state.path,
            "--from", BitflashBinary.sample("sample-r1-counter.hex").path
        ])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(reset.stdout.contains("2 simulated microbit-v2 boards"))
        let show = try BitflashBinary.run(["sim", "show", "--json", "--sim-state", state.path])
        #expect(show.status == 0, "\(show.stderr)")
        let boards = try #require(try json(show) as? [[String: Any]])
        #expect(boards.map { $0["name"] as? String } == ["sim-1", "sim-2"])
        for board in boards {
            let regions = try #require(board["regions"] as? [[String: Any]])
            #expect(regions.first { $0["id"] as? Int == 2 }?["hash"] as? String == programHash)
            #expect(board["services"] as? [String] == ["partial-flashing", "nordic-secure-dfu"])
        }
        let text = try BitflashBinary.run(["sim", "show", "--sim-state", state.path])
        #expect(text.stdout.contains("sim-1: microbit-v2 at F0:0D:00:00:00:01"), "\(text.stdout)")
        #expect(text.stdout.contains("region 2 (program): 0x00047000-"))
    }

    @Test(
        "sim serve needs --udp or --adapter, not both; --adapter without bluetoothd on the bus exits 75 and says how to start it"
    )
    func simServeAdapterRefusals() throws {
        for arguments in [
            ["sim", "serve"], ["sim", "serve", "--udp", "127.0.0.1:0", "--adapter", "hci1"],
            ["sim", "serve", "--udp", "127.0.0.1:0", "--from", "x.hex"]
        ] {
            let r = try BitflashBinary.lab(arguments + ["--sim-state", state.path])
            #expect(r.status == 64, "\(arguments)")
            #expect(r.stderr.contains("--adapter"), "\(r.stderr)")
        }
        guard PrivateBus.isAvailable else { return }
        let bus = try PrivateBus()
        let r = try BitflashBinary.lab(
            ["sim", "serve", "--adapter", "hci1", "--sim-state", state.path, "--for", "5"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        #expect(r.status == 75)
        #expect(
            r.stderr.contains("Bluetooth is not available") && r.stderr.contains("systemctl start bluetooth"),
            "\(r.stderr)")
    }

    @Test func simShowWithoutBoardsSaysHowToMakeOne() throws {
        let r = try BitflashBinary.run(["sim", "show", "--sim-state", state.path])
        #expect(r.status == 69)
        #expect(r.stderr.contains("run `bitflash sim reset`"))
    }

    @Test("info on a folder with no saved board shows the factory board flash would start from, and says so")
    func infoOnAnEmptyFolderSaysTheBoardIsNotSaved() throws {
        let empty = try BitflashBinary.temporaryDirectory()
        let fresh = try BitflashBinary.run(["info", "--simulate", "--sim-state", empty.path, "--json"])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        let state = (try json(fresh) as? [String: Any])?["simulatorState"] as? [String: Any]
        #expect(state?["saved"] as? Bool == false, "\(fresh.stdout)")
        let text = try BitflashBinary.run(["info", "--simulate", "--sim-state", empty.path])
        #expect(text.stdout.contains("not saved yet"), "\(text.stdout)")
        let flashed = try BitflashBinary.run([
            "flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", "--sim-state", empty.path
        ])
        #expect(flashed.status == 0, "\(flashed.stderr)")
        let after = try BitflashBinary.run(["info", "--simulate", "--sim-state", empty.path, "--json"])
        #expect(((try json(after) as? [String: Any])?["simulatorState"] as? [String: Any])?["saved"] as? Bool == true)
        #expect(try BitflashBinary.run(["sim", "show", "--sim-state", empty.path]).status == 0)
    }

    @Test func infoReadsTheMemoryMapAndTheSlotsOfAnMCUbootBoard() throws {
        let r = try BitflashBinary.run(["info", "--simulate", "--sim-state", state.path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let info = try #require(try json(r) as? [String: Any])
        #expect(info["mode"] as? String == "application")
        #expect(info["protocolVersion"] as? Int == 1)
        let regions = try #require(info["regions"] as? [[String: Any]])
        #expect(regions.map { $0["name"] as? String } == ["runtime", "program"])
        #expect(regions[0]["start"] as? String == "0x0001C000")
        let slots = try #require(info["slots"] as? [[String: Any]])
        let primary = try #require(slots.first { $0["slot"] as? Int == 0 })
        #expect(primary["active"] as? Bool == true && primary["confirmed"] as? Bool == true)
        #expect((primary["hash"] as? String)?.count == 64)
        #expect((info["simulatorState"] as? [String: Any])?["profile"] as? String == "microbit-v2-mcuboot")

        let text = try BitflashBinary.run(["info", "--simulate", "--sim-state", state.path])
        #expect(
            text.stdout.contains("mode:           application (partial-flashing protocol version 1)"), "\(text.stdout)")
        #expect(text.stdout.contains("MCUboot slots (SMP image state read):"))
        #expect(text.stdout.contains("image 0 slot 0: version 1.0.0"))
    }

    @Test func infoAfterAFullUpdateShowsTheNewImageAndNoMCUbootLineOnAStockBoard() throws {
        let flashed = try BitflashBinary.run([
            "flash", BitflashBinary.sample("sample-r2-heart.hex").path, "--simulate", "--sim-state", state.path
        ])
        #expect(flashed.status == 0, "\(flashed.stderr)")
        let inspect = try BitflashBinary.run([
            "inspect", "--json", "--board", "microbit-v2", BitflashBinary.sample("sample-r2-heart.hex").path
        ])
        let sections = try #require((try json(inspect) as? [String: Any])?["sections"] as? [[String: Any]])
        let runtimeHash = try #require((sections.first?["makeCode"] as? [String: Any])?["runtimeHash"] as? String)
        let info = try #require(
            try json(try BitflashBinary.run(["info", "--simulate", "--sim-state", state.path, "--json"]))
                as? [String: Any])
        #expect((info["regions"] as? [[String: Any]])?.first?["hash"] as? String == runtimeHash)

        let stock = try BitflashBinary.temporaryDirectory()
        _ = try BitflashBinary.run(["sim", "reset", "--profile", "calliope-mini-3", "--sim-state", stock.path])
        let plain = try BitflashBinary.run(["info", "--simulate", "calliope-mini-3", "--sim-state", stock.path])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains("no McuMgr (SMP) service"))
    }

    @Test(arguments: ["hex", "bin", "uf2", "mcuboot"])
    func convertWritesEveryTarget(_ target: String) throws {
        let out = state.appendingPathComponent("out.\(target)")
        let r = try BitflashBinary.run([
            "convert", BitflashBinary.sample("sample-r1-heart.hex").path, "--board", "microbit-v2",
            "--to", target, "-o", out.path
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let bytes = try [UInt8](Data(contentsOf: out))
        #expect(r.stdout.contains("wrote \(out.path): \(target)"))
        switch target {
        case "hex": #expect(bytes.starts(with: Array(":02000004".utf8)))
        case "uf2": #expect(bytes.starts(with: [0x55, 0x46, 0x32, 0x0A]) && bytes.count % 512 == 0)
        case "mcuboot": #expect(bytes.starts(with: [0x3D, 0xB8, 0xF3, 0x96]))
        default: #expect(bytes.count == 0x77000 - 0x1C000 || bytes.count > 100_000)
        }
        // What convert wrote is itself a firmware file bitflash reads (except raw binaries).
        if target != "bin" {
            #expect(try BitflashBinary.run(["inspect", out.path]).status == 0)
        }
    }

    @Test func convertRefusesUF2ForAnNRF51Board() throws {
        let r = try BitflashBinary.run([
            "convert", BitflashBinary.sample("sample-r1-heart.hex").path, "--board", "microbit-v1",
            "--to", "uf2", "-o", state.appendingPathComponent("x.uf2").path
        ])
        #expect(r.status == 64)
        #expect(r.stderr.contains("use --to hex"))
    }
}

/// Exit codes that need an unusual situation.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct ExitCodeTests {
    @Test func anOutputFileThatCannotBeWrittenExits73() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let out = dir.appendingPathComponent("missing-folder/out.hex").path
        let r = try BitflashBinary.run([
            "convert", BitflashBinary.sample("sample-r1-heart.hex").path, "--board", "microbit-v2",
            "--to", "hex", "-o", out
        ])
        #expect(r.status == 73)
        #expect(r.stderr.contains("missing-folder/out.hex: cannot write"), "\(r.stderr)")
    }

    @Test func aRealBoardWithoutAReachableSystemBusExits75SayingHowToStartBluetooth() throws {
        let env = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bitflash-test-bus"]
        let r = try BitflashBinary.run(
            ["flash", BitflashBinary.sample("sample-r1-heart.hex").path, "--device", "AA:BB:CC:DD:EE:FF"],
            environment: env)
        #expect(r.status == 75)
        #expect(r.stderr.contains("Bluetooth is not available: cannot reach the system bus"), "\(r.stderr)")
        #expect(r.stderr.contains("systemctl start bluetooth"))
        let scan = try BitflashBinary.run(["scan", "--timeout", "1"], environment: env)
        #expect(scan.status == 75)
    }

    @Test func deviceAndSimulateTogetherAreABadCommandLine() throws {
        let r = try BitflashBinary.run([
            "flash", BitflashBinary.sample("sample-r1-heart.hex").path, "--device", "zotig", "--simulate"
        ])
        #expect(r.status == 64)
        #expect(r.stderr.contains("use either --device/--all-in-range or --simulate"))
    }
}
