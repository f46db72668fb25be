import Foundation
import Testing
import TestSupport

/// The Bluetooth commands on a bus that is broken or a bluetoothd that is hung: each ends, within
/// its own time, with 75 (Bluetooth not available) and says what is wrong, as
/// docs/json-and-exit-codes.md promises; none hangs, none blames the board's range.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct BrokenBusCommandTests {
    static let commands: [[String]] = [
        ["scan", "--timeout", "2"],
        ["info", "--device", "F0:0D:00:00:00:01", "--scan-timeout", "2"],
        ["forget", "F0:0D:00:00:00:01"]
    ]

    /// Runs `arguments` with the system bus at `address`; a run that has not ended after a
    /// minute is killed (and the test fails on its status).
    static func run(_ arguments: [String], bus address: String) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try await ExternalProcess.run(
            try #require(BitflashBinary.url), arguments, timeout: .seconds(60),
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
    }

    @Test(
        "a bus socket that accepts and never answers, or answers garbage: 75 and a word about the bus and bluetoothd",
        arguments: BrokenBusSocket.Behaviour.allCases, commands)
    func brokenBus(behaviour: BrokenBusSocket.Behaviour, arguments: [String]) async throws {
        let socket = try BrokenBusSocket(behaviour)
        let r = try await Self.run(arguments, bus: socket.address)
        #expect(r.status == 75, "\(arguments) on a \(behaviour) bus: \(r.status) \(r.stderr)")
        #expect(r.stderr.contains("Bluetooth is not available"), "\(r.stderr)")
        #expect(r.stderr.contains("bluetoothd"), "\(r.stderr)")
        #expect(!r.stderr.contains("out of range"), "\(r.stderr)")
    }

    /// A process that owns org.bluez on `bus` and never answers a call.
    static func silentBlueZ(on bus: PrivateBus) throws -> ExternalProcess {
        let script = """
            import dbus, sys, time
            connection = dbus.bus.BusConnection(sys.argv[1])
            connection.request_name("org.bluez")
            print("owning org.bluez", flush=True)
            time.sleep(600)
            """
        return try ExternalProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, bus.address])
    }

    static var hasDBusPython: Bool {
        guard PrivateBus.isAvailable, FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            return false
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", "import dbus"]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }

    @Test(
        "an org.bluez that never replies: 75 and 'bluetoothd did not answer', not a board out of range",
        .enabled(if: hasDBusPython, "dbus-daemon or python3-dbus missing: silent bluetoothd test skipped"),
        arguments: commands)
    func silentBluetoothd(arguments: [String]) async throws {
        let bus = try PrivateBus()
        let owner = try Self.silentBlueZ(on: bus)
        defer { owner.interrupt() }
        #expect(await owner.wait(upTo: .seconds(30)) { $0.stdout.contains("owning org.bluez") }, "\(owner.stderr)")
        let r = try await Self.run(arguments, bus: bus.address)
        #expect(r.status == 75, "\(arguments): \(r.status) \(r.stderr)")
        #expect(r.stderr.contains("bluetoothd did not answer"), "\(r.stderr)")
        #expect(!r.stderr.contains("out of range"), "\(r.stderr)")
        _ = await owner.stop(within: .seconds(10))
    }
}
