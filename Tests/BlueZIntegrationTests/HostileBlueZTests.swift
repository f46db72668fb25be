import BlueZTransport
import DBus
import Foundation
import Synchronization
import Testing
import TestSupport
import Transport
import PartialFlashingFrames

/// A seeded hostile org.bluez: well-formed enough to be found, then every reply and signal of
/// the wrong type, size or shape. The backend must turn each into a `TransportError` (or drop
/// it), deliver exactly the well-formed notifications in order, never crash and never hang.
@Suite(
    .serialized,
    .enabled(
        if: PrivateBus.isAvailable,
        "dbus-daemon not found: hostile BlueZ tests skipped (install the dbus-daemon package)"))
struct HostileBlueZTests {
    static let adapter = "/org/bluez/hci0"
    static let device = "/org/bluez/hci0/dev_F0_0D_00_00_00_01"
    static let service = device + "/service0010"
    static let characteristic = service + "/char0011"
    static let sentinel: [UInt8] = [0xEE, 0xEE]

    /// One seed's misbehaviour, drawn up front so the test knows what to expect.
    struct Plan: Sendable {
        var characteristicProperties: [String: DBusValue]
        var characteristicIsValid: Bool
        var notifications: [DBusValue]
        var writeReplies: [Reply]
        var readReplies: [Reply]
        /// The link drops while this write (by index) is in flight; the write never answers.
        var dropDuringWrite: Int?

        enum Reply: Sendable { case ok([DBusValue]), error(String, String) }

        init(seed: UInt64) {
            var g = SeededGenerator(seed: seed)
            func junk() -> DBusValue {
                switch Int.random(in: 0..<8, using: &g) {
                case 0: return .string(String(repeating: "x", count: Int.random(in: 0...70_000, using: &g)))
                case 1: return .uint32(.random(in: 0...UInt32.max, using: &g))
                case 2: return .strings((0..<Int.random(in: 0...3000, using: &g)).map { "\($0)" })
                case 3: return .bool(.random(using: &g))
                case 4:
                    return .bytes(
                        (0..<Int.random(in: 513...9000, using: &g)).map { _ in .random(in: 0...255, using: &g) })
                case 5: return .int16(.random(in: .min ... .max, using: &g))
                case 6: return .variant(.variant(.objectPath("/x")))
                default: return .array(elementSignature: "i", [.int32(1), .int32(2)])
                }
            }
            var props: [String: DBusValue] = [
                "UUID": .string(PartialFlashingGATT.characteristic.characteristic.uuidString),
                "Service": .objectPath(HostileBlueZTests.service),
                "Flags": .strings(["write-without-response", "notify"]), "MTU": .uint16(23), "Value": .bytes([])
            ]
            for key in ["UUID", "Service", "Flags", "MTU", "Value"] where Int.random(in: 0..<4, using: &g) == 0 {
                if Bool.random(using: &g) { props[key] = nil } else { props[key] = junk() }
            }
            characteristicProperties = props
            // Found only with its UUID intact; a Service that is missing or not an object path
            // falls back to the parent path (as BlueZ lays them out), another path hides it.
            let service: String? = if case .objectPath(let p)? = props["Service"]?.unwrapped { p } else { nil }
            characteristicIsValid =
                props["UUID"] == .string(PartialFlashingGATT.characteristic.characteristic.uuidString)
                && (service == nil || service == HostileBlueZTests.service)
            notifications = (0..<Int.random(in: 1...12, using: &g)).map { _ in
                Bool.random(using: &g)
                    ? .bytes((0..<Int.random(in: 0...20, using: &g)).map { _ in .random(in: 0...255, using: &g) })
                    : junk()
            }
            func reply() -> Reply {
                switch Int.random(in: 0..<5, using: &g) {
                case 0:
                    return .error(
                        "org.bluez.Error.Failed", String(repeating: "f", count: Int.random(in: 0...5000, using: &g)))
                case 1: return .error("org.bluez.Error.InProgress", "Operation already in progress")
                case 2: return .error("com.example.Unheard.Of", "")
                case 3: return .ok([junk()])
                default: return .ok([.bytes([1, 2, 3])])
                }
            }
            writeReplies = (0..<4).map { _ in reply() }
            readReplies = (0..<3).map { _ in reply() }
            dropDuringWrite = Int.random(in: 0..<3, using: &g) == 0 ? Int.random(in: 0..<4, using: &g) : nil
        }

        /// The notifications a correct client passes on: byte arrays of at most 512 bytes.
        var expectedNotifications: [[UInt8]] {
            notifications.compactMap { if case .bytes(let b) = $0, b.count <= 512 { return b } else { return nil } } + [
                HostileBlueZTests.sentinel
            ]
        }
    }

    /// Serves `plan` as org.bluez on `bus`.
    final class Server: Sendable {
        let connection: DBusConnection
        let server: DBusObjectServer
        let plan: Plan
        let counters = Mutex((writes: 0, reads: 0, notifying: false))

        init(bus: PrivateBus, plan: Plan) async throws {
            connection = try DBusConnection(bus: .address(bus.address))
            try await connection.requestName("org.bluez")
            server = try DBusObjectServer(connection: connection)
            self.plan = plan
            try server.add(path: "/org/bluez", interfaces: ["org.bluez.AgentManager1": [:]])
            try server.add(
                path: HostileBlueZTests.adapter,
                interfaces: [
                    "org.bluez.Adapter1": [
                        "Address": .string("00:AA:01:00:00:01"), "Powered": .bool(true)
                    ]
                ]
            ) { _ in [] }
            try server.add(
                path: HostileBlueZTests.device,
                interfaces: [
                    "org.bluez.Device1": [
                        "Address": .string("F0:0D:00:00:00:01"), "Name": .string("BBC micro:bit [zotig]"),
                        "Connected": .bool(false), "ServicesResolved": .bool(false)
                    ]
                ],
                methods: { [weak self] call in
                    try await self?.device(call) ?? []
                }, concurrent: true)
        }

        func device(_ call: DBusMethodCall) async throws -> [DBusValue] {
            switch call.member {
            case "Connect":
                try server.setProperties(
                    path: HostileBlueZTests.device, interface: "org.bluez.Device1", ["Connected": .bool(true)])
                try server.add(
                    path: HostileBlueZTests.service,
                    interfaces: [
                        "org.bluez.GattService1": [
                            "UUID": .string(PartialFlashingGATT.service.uuidString),
                            "Device": .objectPath(HostileBlueZTests.device),
                            "Primary": .bool(true)
                        ]
                    ])
                try server.add(
                    path: HostileBlueZTests.characteristic,
                    interfaces: ["org.bluez.GattCharacteristic1": plan.characteristicProperties],
                    methods: { [weak self] call in try await self?.characteristic(call) ?? [] }, concurrent: true)
                // Junk first, then the real answer.
                try server.setProperties(
                    path: HostileBlueZTests.device, interface: "org.bluez.Device1", ["ServicesResolved": .string("yes")]
                )
                try server.setProperties(
                    path: HostileBlueZTests.device, interface: "org.bluez.Device1", ["ServicesResolved": .bool(true)])
                return []
            case "Disconnect":
                try server.setProperties(
                    path: HostileBlueZTests.device, interface: "org.bluez.Device1",
                    ["Connected": .bool(false), "ServicesResolved": .bool(false)])
                return []
            default:
                return []
            }
        }

        func characteristic(_ call: DBusMethodCall) async throws -> [DBusValue] {
            switch call.member {
            case "StartNotify":
                // As BlueZ: a second StartNotify of the same client is a no-op.
                guard
                    counters.withLock({ c -> Bool in
                        defer { c.notifying = true }; return !c.notifying
                    })
                else { return [] }
                // The notifications go out now, ahead of this reply: the client takes them from the
                // subscription it made before connecting (`notifications(of:)`), whatever their order
                // with the reply, so nothing here waits for the reply to have left first.
                for value in plan.notifications {
                    try server.setProperties(
                        path: HostileBlueZTests.characteristic, interface: "org.bluez.GattCharacteristic1",
                        ["Value": value])
                }
                try server.setProperties(
                    path: HostileBlueZTests.characteristic, interface: "org.bluez.GattCharacteristic1",
                    ["Value": .bytes(HostileBlueZTests.sentinel)])
                return []
            case "WriteValue":
                let n = counters.withLock { c -> Int in
                    c.writes += 1; return c.writes - 1
                }
                if n == plan.dropDuringWrite {
                    try server.setProperties(
                        path: HostileBlueZTests.device, interface: "org.bluez.Device1", ["Connected": .bool(false)])
                    // A reply that never comes: the client must fail on the link loss, not on this
                    // write. The sleep is a bound on a reply nobody waits for, not synchronisation.
                    try await Task.sleep(for: .seconds(60))
                }
                return try answer(plan.writeReplies[n % plan.writeReplies.count])
            case "ReadValue":
                let n = counters.withLock { c -> Int in
                    c.reads += 1; return c.reads - 1
                }
                return try answer(plan.readReplies[n % plan.readReplies.count])
            default:
                return []
            }
        }

        func answer(_ reply: Plan.Reply) throws -> [DBusValue] {
            switch reply {
            case .ok(let values): return values
            case let .error(name, message): throw DBusError(name: name, message: message)
            }
        }
    }

    @Test("hostile replies and notifications become errors or are dropped, never crash or hang", arguments: 0..<24)
    func hostileBlueZ(seed: Int) async throws {
        let plan = Plan(seed: UInt64(seed) &+ 1000)
        let bus = try PrivateBus()
        let server = try await Server(bus: bus, plan: plan)
        defer { server.connection.close() }
        let bz = try await BlueZBus.open(bus: .address(bus.address), callTimeout: .seconds(5))
        let found = try await BlueZScanner(bus: bz).find(DeviceQuery("zotig"), timeout: .seconds(20))
        var settings = BlueZDeviceTransport.Settings()
        // Bounds only: 24 cases start at once, each with its own bus, and a busy 2-core machine can
        // hold a reply for seconds. What is tested is the replies, not their timing.
        settings.servicesResolvedTimeout = .seconds(20)
        settings.connectAttempts = 1
        let transport = try await BlueZDeviceTransport.open(device: found, settings: settings, on: bz)
        defer { transport.close() }
        let pf = PartialFlashingGATT.characteristic
        // Subscribed before anything can arrive (the connect may already enable notifications).
        let stream = transport.notifications(of: pf)
        let info = try await transport.connect(timeout: .seconds(20))
        #expect(info.mtu >= 23 && info.mtu <= 517)
        guard plan.characteristicIsValid else {
            await #expect(throws: TransportError.self) {
                try await transport.write([1], to: pf, kind: .command, timeout: .seconds(2))
            }
            return
        }
        let collector = Task {
            var got: [[UInt8]] = []
            for await value in stream {
                got.append(value)
                if value == HostileBlueZTests.sentinel { break }
            }
            return got
        }
        try await transport.enableNotifications(pf, timeout: .seconds(20))
        let received = await collector.value
        #expect(received == plan.expectedNotifications, "seed \(seed)")

        var linkDropped = false
        for i in 0..<4 {
            do {
                try await transport.write([UInt8(i)], to: pf, kind: .command, timeout: .seconds(5))
            } catch let error as TransportError {
                if i == plan.dropDuringWrite {
                    #expect(
                        error == .disconnected(operation: "write to \(pf.characteristic)", reason: .remoteTerminated),
                        "seed \(seed)")
                    linkDropped = true
                } else if linkDropped {
                    #expect(error == .notConnected(operation: "write to \(pf.characteristic)"), "seed \(seed)")
                } else if case .timeout = error {
                    Issue.record("seed \(seed): write \(i) timed out instead of failing")
                }
            }
        }
        for _ in 0..<3 {
            do {
                let value = try await transport.read(pf, timeout: .seconds(5))
                #expect(value.count <= 512)
            } catch is TransportError {
                // Expected for most replies; any other error type fails the test.
            }
        }
        await transport.disconnect()
    }
}
