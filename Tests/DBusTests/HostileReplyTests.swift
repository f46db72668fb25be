import DBus
import Testing
import TestSupport

/// A service that answers with the wrong shapes: the client gets errors, never a crash.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct HostileReplyTests {
    let pair: BusPair

    init() throws {
        pair = try BusPair()
        // GetManagedObjects answered with a property map, ReadValue with a string, others with nothing.
        try pair.server.export(path: "/") { call in
            switch call.member {
            case "GetManagedObjects": return [.propertyMap(["oops": .uint32(1)])]
            case "ReadValue": return [.string("not bytes")]
            case "Nested": return [.managedObjects(["/a": ["i.f": ["Value": .string("text")]]])]
            default: return []
            }
        }
    }

    func call(_ method: String) async throws -> [DBusValue] {
        try await pair.client.call(
            destination: pair.server.uniqueName, path: "/", interface: "org.example.Hostile", method: method)
    }

    @Test func wrongReplySignatureGivesTypeMismatch() async throws {
        let reply = try await call("GetManagedObjects")
        #expect(
            throws: DBusError.typeMismatch(expected: "a{oa{sa{sv}}}", actual: "a{sv}", context: "GetManagedObjects")
        ) {
            try reply.expectSignature("a{oa{sa{sv}}}", "GetManagedObjects")
        }
        #expect(throws: DBusError.self) { _ = try reply.argument(0).managedObjects() }
    }

    @Test func wrongValueTypeGivesTypeMismatch() async throws {
        let reply = try await call("ReadValue")
        #expect(throws: DBusError.typeMismatch(expected: "ay", actual: "s", context: "ReadValue")) {
            _ = try reply.argument(0).bytes("ReadValue")
        }
    }

    @Test func missingArgumentsGiveMissingArgument() async throws {
        let reply = try await call("Nothing")
        #expect(reply.isEmpty)
        #expect(throws: DBusError.missingArgument(index: 0, context: "ReadValue")) {
            _ = try reply.argument(0, "ReadValue")
        }
        #expect(throws: DBusError.missingArgument(index: -1, context: "message")) { _ = try reply.argument(-1) }
    }

    @Test func wrongTypeDeepInsideNestedReplyGivesTypeMismatch() async throws {
        let objects = try await call("Nested").argument(0).managedObjects()
        #expect(throws: DBusError.self) { _ = try objects["/a"]?["i.f"]?["Value"]?.bytes() }
        #expect(throws: DBusError.self) { _ = try objects["/a"]?["i.f"]?["Value"]?.uint16() }
    }

    @Test func errorMessagesTellWhatToDo() {
        let timeout = DBusError.timeout(
            method: "org.bluez.Device1.Connect on /org/bluez/hci0/dev_AA", after: .seconds(2))
        #expect(timeout.description.contains("org.bluez.Device1.Connect"))
        #expect(timeout.description.contains("try again"))
        #expect(
            DBusError.typeMismatch(expected: "ay", actual: "s", context: "ReadValue").description.contains(
                "expected type 'ay' but got 's'"))
    }
}
