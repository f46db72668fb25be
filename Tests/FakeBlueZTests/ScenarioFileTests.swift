import DBus
import FakeBlueZ
import Foundation
import Testing

/// Reading scenario files: defaults, every fault, and clear refusals.
struct ScenarioFileTests {
    static func load(_ json: String) throws -> FakeBlueZScenario {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "scenario-\(UUID().uuidString.prefix(8)).json")
        try json.write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        return try FakeBlueZScenario.load(from: url)
    }

    static func refusal(_ json: String) -> String {
        do {
            _ = try load(json)
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test("A board with no keys is a well-behaved board; every fault key is read")
    func defaultsAndFaults() throws {
        let scenario = try Self.load(
            """
            {"timeScale": 0.5, "boards": [{}, {"state": "b", "profile": "calliope-mini-3", "name": "Calliope mini", "address": "F0:0D:00:00:00:09",
              "from": "x.hex", "requiresPairing": true, "refusesPairing": true, "connectFailures": ["le-connection-abort-by-local", "in-progress"],
              "servicesNeverResolve": true, "disconnectAfterWrites": 12, "absent": true, "staleBond": true, "gattCache": true, "pairingModeOnly": true,
              "hostile": ["missing-properties"], "hostileSeed": 3, "rssi": -80, "advertisedUUIDs": []}]}
            """)
        #expect(scenario.timeScale == 0.5)
        #expect(scenario.boards[0].behaviour == FakeBoardBehaviour())
        #expect(scenario.boards[0].state == nil)
        let b = scenario.boards[1]
        #expect(b.state == "b" && b.profile == "calliope-mini-3" && b.name == "Calliope mini" && b.from == "x.hex")
        #expect(b.address == "F0:0D:00:00:00:09")
        var expected = FakeBoardBehaviour()
        expected.requiresPairing = true
        expected.refusesPairing = true
        expected.connectFailures = [.abortByLocal, .inProgress]
        expected.servicesNeverResolve = true
        expected.disconnectAfterWrites = 12
        expected.absent = true
        expected.staleBond = true
        expected.gattCache = true
        expected.pairingModeOnly = true
        expected.hostile = [.missingProperties]
        expected.hostileSeed = 3
        expected.rssi = -80
        expected.advertisedUUIDs = []
        #expect(b.behaviour == expected)
    }

    @Test("Unknown keys, wrong types, unknown faults and empty board lists are refused with the place and the fix")
    func refusals() {
        #expect(Self.refusal(#"{"boards": [{"staleBonds": true}]}"#).contains("unknown key 'staleBonds'"))
        #expect(Self.refusal(#"{"boards": [{"staleBonds": true}]}"#).contains("staleBond"))
        #expect(Self.refusal(#"{"board": []}"#).contains("unknown key 'board'"))
        #expect(Self.refusal(#"{"boards": []}"#).contains("\"boards\" is empty"))
        #expect(Self.refusal(#"{"boards": [{"absent": "yes"}]}"#).contains("at .boards[0].absent: expected Bool"))
        #expect(
            Self.refusal(#"{"boards": [{"connectFailures": ["timeout"]}]}"#).contains("boards[0].connectFailures[0]"))
        #expect(Self.refusal(#"{"boards": [{"disconnectAfterWrites": 0}]}"#).contains("must be at least 1"))
        #expect(Self.refusal("not json").contains("bad scenario"))
        #expect(FakeBlueZError.invalidAddress("F0:0D").description.contains("six hex bytes"))
    }

    @Test("Boards with a malformed or shared address are refused before the fake touches the bus")
    func addressesAreChecked() async throws {
        let board = try TestBoards.microbit()
        let nowhere = DBusBusAddress.address("unix:path=/nonexistent/bus")
        await #expect(throws: FakeBlueZError.invalidAddress("F0:0D:00:00:01")) {
            _ = try await FakeBlueZ.start(bus: nowhere, boards: [FakeBoard(board: board, address: "F0:0D:00:00:01")])
        }
        await #expect(throws: FakeBlueZError.duplicateAddress("F0:0D:00:00:00:01")) {
            _ = try await FakeBlueZ.start(
                bus: nowhere, boards: [FakeBoard(board: board), FakeBoard(board: board, address: "f0:0d:00:00:00:01")])
        }
        await #expect(throws: FakeBlueZError.self) {
            _ = try await FakeBlueZ.start(bus: nowhere, boards: [FakeBoard(board: board)])
        }
    }
}
