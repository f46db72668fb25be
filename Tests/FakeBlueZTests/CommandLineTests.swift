import DBus
import FakeBlueZ
import Foundation
import PartialFlashing
import SampleFirmware
import SimulatedBoard
import Testing
import TestSupport

/// `bitflash-lab sim bluez`, the built binary, as an integration test starts it.
@Suite(
    .enabled(
        if: PrivateBus.isAvailable && ExternalProcess.bitflashLab != nil,
        "dbus-daemon or the bitflash binary missing: sim bluez command-line tests skipped"))
struct CommandLineTests {
    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fake-bluez-cli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Starts the fake and waits for its readiness line.
    static func start(_ arguments: [String], bus: PrivateBus) async throws -> ExternalProcess {
        let bitflash = try #require(ExternalProcess.bitflashLab)
        let fake = try ExternalProcess(
            bitflash, ["sim", "bluez"] + arguments,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        let ready = await fake.wait(upTo: .seconds(60)) { $0.stdout.contains("fake org.bluez ready") || !$0.isRunning }
        #expect(ready && fake.isRunning, "\(fake.stdout) \(fake.stderr)")
        if !fake.isRunning { throw BusFixtureError.daemonDidNotStart("bitflash-lab sim bluez: \(fake.stderr)") }
        return fake
    }

    @Test("The fake serves the saved board under its name once ready, and saves it on SIGTERM for sim show")
    func servesAndSavesTheBoard() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bitflash = try #require(ExternalProcess.bitflashLab)
        let reset = try await ExternalProcess.run(
            bitflash, ["sim", "reset", "--profile", "microbit-v2", "--sim-state", dir.path],
            timeout: .seconds(120))
        #expect(reset.status == 0, "\(reset.stderr)")
        let bus = try PrivateBus()
        let fake = try await Self.start(
            [
                "--sim-state", dir.path, "--time-scale", "0", "--name", "BBC micro:bit [vugat]",
                "--requires-pairing", "--in-pairing-mode"
            ], bus: bus)
        #expect(
            fake.stdout.contains(
                "board sim: F0:0D:00:00:00:01 \"BBC micro:bit [vugat]\" microbit-v2 at /org/bluez/hci0/dev_F0_0D_00_00_00_01 (requires pairing; starts in pairing mode)"
            ),
            "\(fake.stdout)")

        let client = try DBusConnection(bus: .address(bus.address))
        let added = try await client.signals(matching: .objectManager(sender: "org.bluez", member: "InterfacesAdded"))
        _ = try await client.call(
            destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1", method: "StartDiscovery"
        )
        let queue = SignalQueue(added)
        let device = try await queue.next { try $0.arguments.argument(1).stringKeyed()["org.bluez.Device1"] != nil }
        let path = try device.arguments.argument(0).objectPath()
        #expect(
            try device.arguments.argument(1).stringKeyed()["org.bluez.Device1"]?.properties()["Name"]?.string()
                == "BBC micro:bit [vugat]")
        _ = try await client.call(destination: "org.bluez", path: path, interface: "org.bluez.Device1", method: "Pair")
        let resolved = try await client.call(
            destination: "org.bluez", path: path, interface: DBusStandard.properties, method: "Get",
            arguments: [.string("org.bluez.Device1"), .string("Connected")])
        #expect(try resolved.argument(0).bool() == true)
        client.close()

        #expect(await fake.stop(within: .seconds(30)) == 0)
        #expect(fake.stdout.contains("stopped; boards saved"))
        let show = try await ExternalProcess.run(
            bitflash, ["sim", "show", "--sim-state", dir.path, "--json"], timeout: .seconds(60))
        #expect(show.status == 0)
        let shown = try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [[String: Any]]
        #expect(shown?.first?["name"] as? String == "sim")
        // The user put it in pairing mode (--in-pairing-mode); nothing reset it since.
        #expect(shown?.first?["mode"] as? String == "pairing")
    }

    @Test("A scenario file plays several boards with their own firmware and faults; each board gets its state file")
    func scenarioWithSeveralBoards() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bitflash = try #require(ExternalProcess.bitflashLab)
        let samples = try await ExternalProcess.run(bitflash, ["sim", "samples", dir.path], timeout: .seconds(120))
        #expect(samples.status == 0)
        let scenario = dir.appendingPathComponent("scenario.json")
        try """
        {"timeScale": 0, "boards": [
          {"profile": "microbit-v2", "from": "sample-r1-counter.hex", "name": "BBC micro:bit [one]", "address": "F0:0D:00:00:00:0A"},
          {"profile": "calliope-mini-3-mcuboot", "state": "second", "absent": true, "connectFailures": ["in-progress"]}
        ]}
        """.write(to: scenario, atomically: true, encoding: .utf8)
        let bus = try PrivateBus()
        let fake = try await Self.start(
            ["--scenario", scenario.path, "--sim-state", dir.appendingPathComponent("state").path], bus: bus)
        #expect(
            fake.stdout.contains("board sim-1: F0:0D:00:00:00:0A \"BBC micro:bit [one]\" microbit-v2 at"),
            "\(fake.stdout)")
        // Unnamed, it advertises as its runtime would, with its state name as the friendly name.
        #expect(
            fake.stdout.contains(
                "board second: F0:0D:00:00:00:02 \"Calliope mini [second]\" calliope-mini-3-mcuboot at"),
            "\(fake.stdout)")
        #expect(fake.stdout.contains("(absent; connect fails: in-progress)"))
        #expect(fake.stdout.contains("2 boards"))
        #expect(await fake.stop(within: .seconds(30)) == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("state").path)
            .sorted()
        // The boards' files, and the lock the fake held while it served them.
        #expect(files == ["bitflash.lock", "second.json", "sim-1.json"])
        // The first board holds the counter program of the sample file, as a board made from it does.
        let saved = try SimulatedBoard.load(from: dir.appendingPathComponent("state/sim-1.json"))
        let expected = try SimulatedBoard(
            .microbitV2, image: SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .counter))
        #expect(saved.memoryMap.count == 3)
        #expect(saved.memoryMap == expected.memoryMap)
    }

    @Test("Bad starts say what to do: no bus, a scenario with an unknown key, board options beside a scenario")
    func badStartsExplainThemselves() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bitflash = try #require(ExternalProcess.bitflashLab)
        let noBus = try await ExternalProcess.run(
            bitflash, ["sim", "bluez", "--sim-state", dir.path], timeout: .seconds(60),
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": ""])
        #expect(noBus.status == 64)
        #expect(noBus.stderr.contains("start a private dbus-daemon"), "\(noBus.stderr)")

        let scenario = dir.appendingPathComponent("typo.json")
        try #"{"boards": [{"requirePairing": true}]}"#.write(to: scenario, atomically: true, encoding: .utf8)
        let typo = try await ExternalProcess.run(
            bitflash, ["sim", "bluez", "--scenario", scenario.path, "--bus", "unix:path=/nonexistent"],
            timeout: .seconds(60))
        #expect(typo.status == 65)
        #expect(typo.stderr.contains("unknown key 'requirePairing'"), "\(typo.stderr)")
        #expect(typo.stderr.contains("requiresPairing"))

        let mixed = try await ExternalProcess.run(
            bitflash, ["sim", "bluez", "--scenario", scenario.path, "--absent"], timeout: .seconds(60))
        #expect(mixed.status == 64)
        #expect(mixed.stderr.contains("put the board options into the scenario file"), "\(mixed.stderr)")

        // org.bluez already owned on the bus (a first fake, or a real bluetoothd): exit 69. (The
        // second has a state folder of its own: the first holds its folder while it serves.)
        let bus = try PrivateBus()
        let first = try await Self.start(["--sim-state", dir.path, "--time-scale", "0"], bus: bus)
        let second = try await ExternalProcess.run(
            bitflash, ["sim", "bluez", "--sim-state", dir.appendingPathComponent("other").path, "--bus", bus.address],
            timeout: .seconds(60))
        #expect(second.status == 69)
        #expect(second.stderr.contains("could not own the D-Bus name org.bluez"), "\(second.stderr)")
        #expect(await first.stop(within: .seconds(30)) == 0)
    }
}
