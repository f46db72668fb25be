import DBus
import Foundation
import Testing
import TestSupport

/// Signal subscriptions: ordering, filtering, and the end of streams.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct SignalTests {
    let pair: BusPair

    init() throws {
        pair = try BusPair()
    }

    @Test func receivesSignalsInOrder() async throws {
        let stream = try await pair.client.signals(
            matching: DBusMatchRule(interface: "org.example.Ticker", member: "Tick"))
        for i in UInt32(0)..<500 {
            try pair.server.emitSignal(
                path: "/test/ticker", interface: "org.example.Ticker", member: "Tick",
                arguments: [.uint32(i), .bytes([UInt8(truncatingIfNeeded: i)])])
        }
        let received = try await collect(500, from: stream)
        #expect(try received.map { try $0.arguments.argument(0).uint32() } == Array(0..<500))
        #expect(received.allSatisfy { $0.sender == pair.server.uniqueName && $0.path == "/test/ticker" })
    }

    @Test func filtersByPathNamespaceMemberAndArg0() async throws {
        let rule = DBusMatchRule.propertiesChanged(
            pathNamespace: "/org/bluez/hci0", interface: "org.bluez.GattCharacteristic1")
        let stream = try await pair.client.signals(matching: rule)
        let emit = { (path: String, interface: String, marker: UInt8) in
            try pair.server.emitSignal(
                path: path, interface: DBusStandard.properties, member: "PropertiesChanged",
                arguments: [.string(interface), .propertyMap(["Value": .bytes([marker])]), .strings([])])
        }
        try emit("/org/bluez/hci1/dev_AA/service0010/char0011", "org.bluez.GattCharacteristic1", 1)  // other adapter
        try emit("/org/bluez/hci0/dev_AA", "org.bluez.Device1", 2)  // other interface
        try pair.server.emitSignal(
            path: "/org/bluez/hci0/dev_AA", interface: "org.example.Other", member: "PropertiesChanged",
            arguments: [.string("org.bluez.GattCharacteristic1")])  // other signal interface
        try emit("/org/bluez/hci0/dev_AA/service0010/char0011", "org.bluez.GattCharacteristic1", 3)  // the one
        let received = try await collect(1, from: stream)
        #expect(try received.first?.arguments.argument(1).properties()["Value"]?.bytes() == [3])
    }

    @Test func filtersBySenderWellKnownName() async throws {
        let third = try DBusConnection(bus: .address(pair.bus.address))
        try await pair.server.requestName("org.example.Sender")
        let stream = try await pair.client.signals(
            matching: DBusMatchRule(sender: "org.example.Sender", member: "Ping"))
        try third.emitSignal(path: "/x", interface: "org.example.S", member: "Ping", arguments: [.string("impostor")])
        try pair.server.emitSignal(path: "/x", interface: "org.example.S", member: "Ping", arguments: [.string("real")])
        let received = try await collect(1, from: stream)
        #expect(try received.first?.arguments.argument(0).string() == "real")
    }

    @Test func deliversTheSameSignalToEverySubscriber() async throws {
        let a = try await pair.client.signals(matching: DBusMatchRule(member: "Both"))
        let b = try await pair.client.signals(matching: DBusMatchRule(interface: "org.example.S"))
        try pair.server.emitSignal(path: "/x", interface: "org.example.S", member: "Both", arguments: [.int64(-9)])
        #expect(try await collect(1, from: a).first?.arguments == [.int64(-9)])
        #expect(try await collect(1, from: b).first?.arguments == [.int64(-9)])
    }

    @Test func finishesStreamsWhenTheConnectionCloses() async throws {
        let stream = try await pair.client.signals(matching: DBusMatchRule(member: "Never"))
        pair.client.close()
        var count = 0
        for await _ in stream { count += 1 }
        #expect(count == 0)
    }

    @Test func refusesInvalidRules() async {
        await #expect(throws: DBusError.self) {
            _ = try await pair.client.signals(matching: DBusMatchRule(path: "not/a/path"))
        }
    }

    /// The bus's count of match rules held by the client (dbus-daemon's Debug.Stats interface).
    func matchRuleCount() async throws -> UInt32 {
        let stats = try await pair.client.call(
            destination: DBusStandard.bus, path: DBusStandard.busPath, interface: "org.freedesktop.DBus.Debug.Stats",
            method: "GetConnectionStats", arguments: [.string(pair.client.uniqueName)])
        return try stats.argument(0).properties()["MatchRules"]?.uint32() ?? 0
    }

    @Test func removesTheMatchRuleWhenTheStreamEnds() async throws {
        do {
            _ = try await matchRuleCount()
        } catch let error as DBusError where error.hasName(.unknownInterface) || error.hasName(.unknownMethod) {
            print("dbus-daemon built without Debug.Stats: match-rule removal not checked")
            return
        }
        guard let dbusMonitor = ExternalProcess.onPath("dbus-monitor") else {
            print("dbus-monitor not found: match-rule removal not checked")
            return
        }
        // The removal is sent from a task of its own; dbus-monitor shows each RemoveMatch as the
        // bus receives it, so the test waits for the client's (a line of output), not for time.
        let monitor = try ExternalProcess(
            dbusMonitor, ["--address", pair.bus.address, "type='method_call',member='RemoveMatch'"])
        defer { monitor.interrupt() }
        // dbus-monitor is a monitor once the bus took its name back (NameLost).
        #expect(await monitor.wait(upTo: .seconds(20)) { $0.stdout.contains("member=NameLost") || !$0.isRunning })
        let stream = try await pair.client.signals(matching: DBusMatchRule(member: "Gone"))
        #expect(try await matchRuleCount() == 1)
        let consumer = Task { for await _ in stream {} }
        consumer.cancel()
        await consumer.value
        let removal = "sender=\(pair.client.uniqueName) -> destination=org.freedesktop.DBus"
        let seen = await monitor.wait(upTo: .seconds(20)) { m in
            m.stdout.split(separator: "\n").contains { $0.contains(removal) && $0.contains("member=RemoveMatch") }
        }
        #expect(seen, "no RemoveMatch from the client: \(monitor.stdout)")
        // The bus handles a connection's messages in order: this call comes after the removal.
        #expect(try await matchRuleCount() == 0)
    }

    @Test func connectsToTheSystemBusNamedByTheEnvironment() async throws {
        setenv("DBUS_SYSTEM_BUS_ADDRESS", pair.bus.address, 1)
        let system = try DBusConnection(bus: .system)
        #expect(system.uniqueName.hasPrefix(":"))
        #expect(try await pair.client.nameOwner(system.uniqueName) == system.uniqueName)
    }
}
