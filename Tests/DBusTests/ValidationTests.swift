import DBus
import Testing
import TestSupport

/// Values and names libdbus would abort on are refused with an error before anything is sent.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct ValidationTests {
    let pair: BusPair

    init() throws {
        pair = try BusPair()
        try pair.server.export(path: "/test/echo") { call in call.arguments }
    }

    func send(
        _ values: [DBusValue], path: String = "/test/echo", interface: String = "org.example.Echo",
        method: String = "Echo"
    ) async throws -> [DBusValue] {
        try await pair.client.call(
            destination: pair.server.uniqueName, path: path,
            interface: interface, method: method, arguments: values)
    }

    func expectInvalidArgument(_ body: () async throws -> [DBusValue]) async {
        do {
            _ = try await body()
            Issue.record("expected an invalid-argument error")
        } catch let error as DBusError {
            guard case .invalidArgument = error else {
                Issue.record("expected invalidArgument, got \(error)")
                return
            }
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func rejectsArrayHoldingTheWrongElementType() async {
        await expectInvalidArgument { try await send([.array(elementSignature: "s", [.string("a"), .int32(1)])]) }
    }

    @Test func rejectsDictionaryWithContainerKey() async {
        await expectInvalidArgument {
            try await send([.dictionary(keySignature: "as", valueSignature: "v", [])])
        }
    }

    @Test func rejectsEmptyStructAndBadSignatures() async {
        await expectInvalidArgument { try await send([.structure([])]) }
        await expectInvalidArgument { try await send([.signature("a{")]) }
        await expectInvalidArgument { try await send([.array(elementSignature: "ss", [])]) }
    }

    @Test func rejectsStringsWithNul() async {
        await expectInvalidArgument { try await send([.string("a\u{0}b")]) }
    }

    @Test func rejectsInvalidObjectPathsAndNames() async {
        await expectInvalidArgument { try await send([.objectPath("org/bluez")]) }
        await expectInvalidArgument { try await send([.objectPath("/org/bluez/")]) }
        await expectInvalidArgument { try await send([], path: "relative/path") }
        await expectInvalidArgument { try await send([], interface: "nodots") }
        await expectInvalidArgument { try await send([], method: "has.dot") }
    }

    @Test func stillWorksAfterRejectedCalls() async throws {
        await expectInvalidArgument { try await send([.array(elementSignature: "y", [.int16(1)])]) }
        #expect(try await send([.uint16(9)]) == [.uint16(9)])
        #expect(pair.client.pendingCallCount == 0)
    }

    @Test func buildsMatchRuleStrings() {
        let rule = DBusMatchRule.propertiesChanged(
            sender: "org.bluez", pathNamespace: "/org/bluez",
            interface: "org.bluez.GattCharacteristic1")
        #expect(
            rule.ruleString == "type='signal',sender='org.bluez',path_namespace='/org/bluez',"
                + "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='org.bluez.GattCharacteristic1'"
        )
        #expect(DBusMatchRule(arg0: "it's").ruleString == "type='signal',arg0='it'\\''s'")
    }

    @Test func resolvesBusAddressesFromTheEnvironment() throws {
        #expect(
            try DBusBusAddress.system.resolve(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/run/example-bus"])
                == "unix:path=/run/example-bus")
        #expect(try DBusBusAddress.system.resolve(environment: [:]) == DBusBusAddress.defaultSystemAddress)
        #expect(throws: DBusError.noAddress("DBUS_SESSION_BUS_ADDRESS")) {
            try DBusBusAddress.session.resolve(environment: [:])
        }
    }

    @Test func reportsUnreachableBus() {
        #expect(throws: DBusError.self) {
            _ = try DBusConnection(bus: .address("unix:path=/nonexistent/bitflash-no-bus"))
        }
    }
}
