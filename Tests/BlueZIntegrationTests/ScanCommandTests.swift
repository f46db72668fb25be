import Foundation
import Testing
import TestSupport

/// `bitflash scan` against boards that advertise as the real ones do, in every mode.
@Suite(
    .serialized,
    .enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct ScanCommandTests {
    /// A class set in every state a scanner meets: pairing mode (unbonded and bonded), a
    /// whitelisted program with a bond, one in its bootloader, a whitelisted program without a
    /// bond (silent), and a device that is no board.
    static let classroom = """
        {"timeScale": 0, "boards": [
          {"state": "sim-1", "profile": "microbit-v2", "name": "BBC micro:bit [zotig]", "address": "F0:0D:00:00:00:01",
           "requiresPairing": true, "startsInPairingMode": true, "rssi": -50},
          {"state": "sim-2", "profile": "microbit-v2", "name": "BBC micro:bit [vugat]", "address": "F0:0D:00:00:00:02",
           "requiresPairing": true, "bonded": true, "rssi": -70},
          {"state": "sim-3", "profile": "calliope-mini-3", "name": "Calliope mini [gupaz]", "address": "F0:0D:00:00:00:03",
           "requiresPairing": true, "bonded": true, "startsInPairingMode": true, "rssi": -65},
          {"state": "sim", "name": "BBC micro:bit [tipov]", "address": "F0:0D:00:00:00:04", "rssi": -80},
          {"state": "sim-5", "profile": "microbit-v2", "name": "BBC micro:bit [pazoz]", "address": "F0:0D:00:00:00:05",
           "requiresPairing": true},
          {"state": "sim-6", "profile": "microbit-v2", "name": "Thermostat", "address": "F0:0D:00:00:00:06", "rssi": -40}
        ]}
        """

    /// The fake with the class set; board `sim` was left in its bootloader by a Nordic DFU.
    static func classroomFake() throws -> FakeBlueZProcess {
        try FakeBlueZProcess(scenario: classroom) { state in
            let reset = try Bitflash.run(
                ["sim", "reset", "--profile", "microbit-v2", "--stuck-in-bootloader", "--sim-state", state.path],
                bus: "unix:path=/nonexistent")
            #expect(reset.status == 0, "\(reset.stderr)")
        }
    }

    static func listed(_ r: Bitflash.Result) throws -> [[String: Any]] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]], "\(r.stdout) \(r.stderr)")
    }

    @Test(
        "scan lists every board in range, strongest first, with the mode its name and bond tell; a silent board and a stranger are not listed"
    )
    func everyBoardInRange() async throws {
        let fake = try Self.classroomFake()
        let r = try await fake.bitflashAsync(["scan", "--timeout", "2", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try Self.listed(r)
        #expect(
            rows.map { $0["address"] as? String } == [
                "F0:0D:00:00:00:01", "F0:0D:00:00:00:03", "F0:0D:00:00:00:02", "F0:0D:00:00:00:04"
            ])
        let byAddress = Dictionary(uniqueKeysWithValues: rows.map { ($0["address"] as? String ?? "", $0) })
        func row(_ n: Int) -> [String: Any] { byAddress["F0:0D:00:00:00:0\(n)"] ?? [:] }
        #expect(row(1)["name"] as? String == "BBC micro:bit [zotig]")
        #expect(row(1)["mode"] as? String == "unknown")
        #expect(row(1)["bonded"] as? Bool == false)
        #expect(row(2)["name"] as? String == "BBC micro:bit")
        #expect(row(2)["mode"] as? String == "application")
        #expect(row(2)["bonded"] as? Bool == true)
        #expect(row(3)["name"] as? String == "Calliope mini [gupaz]")
        #expect(row(3)["mode"] as? String == "pairing")
        #expect(row(3)["bonded"] as? Bool == true)
        #expect(row(4)["name"] as? String == "DfuTarg")
        #expect(row(4)["mode"] as? String == "bootloader")
        #expect(rows.allSatisfy { Set($0.keys) == ["name", "address", "rssi", "mode", "bonded"] })

        let all = try Self.listed(try await fake.bitflashAsync(["scan", "--timeout", "2", "--json", "--all"]))
        #expect(all.first?["name"] as? String == "Thermostat")
        #expect(all.count == 5)
    }

    @Test("--wait-for ends the scan once the board is seen; a board never seen exits 69 and says so")
    func waitFor() async throws {
        let fake = try Self.classroomFake()
        let found = try await fake.bitflashAsync(["scan", "--timeout", "120", "--wait-for", "gupaz", "--json"])
        #expect(found.status == 0, "\(found.stderr)")
        #expect(try Self.listed(found).contains { $0["address"] as? String == "F0:0D:00:00:00:03" })
        let byAddress = try await fake.bitflashAsync(["scan", "--timeout", "120", "--wait-for", "f0-0d-00-00-00-04"])
        #expect(byAddress.status == 0, "\(byAddress.stderr)")
        #expect(byAddress.stdout.contains("DfuTarg"))

        let missing = try await fake.bitflashAsync([
            "scan", "--timeout", "1", "--wait-for", "F0:0D:00:00:00:05", "--json"
        ])
        #expect(missing.status == 69)
        #expect(missing.stderr.contains("F0:0D:00:00:00:05 was not seen"), "\(missing.stderr)")
        #expect(try Self.listed(missing).count == 4)
    }

    @Test("--count ends the scan once that many boards are seen; fewer in time exits 69")
    func count() async throws {
        let fake = try Self.classroomFake()
        let enough = try await fake.bitflashAsync(["scan", "--timeout", "120", "--count", "4", "--json"])
        #expect(enough.status == 0, "\(enough.stderr)")
        #expect(try Self.listed(enough).count == 4)
        let tooMany = try await fake.bitflashAsync(["scan", "--timeout", "1", "--count", "5"])
        #expect(tooMany.status == 69)
        #expect(tooMany.stderr.contains("4 of 5 boards seen"), "\(tooMany.stderr)")
        let bad = try await fake.bitflashAsync(["scan", "--count", "2", "--wait-for", "zotig"])
        #expect(bad.status == 64)
    }

    @Test("info finds a whitelisted board by its bond, through the filtered scan, although it is not discoverable")
    func bondedProgramIsFound() async throws {
        let fake = try Self.classroomFake()
        let r = try await fake.bitflashAsync(["info", "--device", "F0:0D:00:00:00:02", "--scan-timeout", "5", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(shown["mode"] as? String == "application")
    }
}
