import DBus
import Testing
import TestSupport

/// A BlueZ-shaped object tree served from Swift and read back by a client.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct ObjectServerTests {
    static let device = "/org/bluez/hci0/dev_D4_E5_F6_01_02_03"
    static let characteristic = device + "/service0010/char0011"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"

    let pair: BusPair
    let server: DBusObjectServer
    let writes = Recorder<[UInt8]>()

    init() throws {
        pair = try BusPair()
        server = try DBusObjectServer(connection: pair.server)
        try server.add(
            path: "/org/bluez/hci0",
            interfaces: [
                "org.bluez.Adapter1": [
                    "Address": .string("00:01:02:03:04:05"), "Powered": .bool(true), "Discovering": .bool(false)
                ]
            ], setter: { _, _, _ in })
        try server.add(
            path: Self.device,
            interfaces: [
                "org.bluez.Device1": [
                    "Address": .string("D4:E5:F6:01:02:03"), "Name": .string("BBC micro:bit [zavog]"),
                    "Connected": .bool(false), "ServicesResolved": .bool(false), "RSSI": .int16(-58),
                    "Adapter": .objectPath("/org/bluez/hci0"), "UUIDs": .strings([])
                ]
            ])
        try server.add(
            path: Self.device + "/service0010",
            interfaces: [
                "org.bluez.GattService1": [
                    "UUID": .string("e97dd91d-251d-470a-a062-fa1922dfa9a8"), "Primary": .bool(true),
                    "Device": .objectPath(Self.device), "Handle": .uint16(0x10)
                ]
            ])
        let writes = self.writes
        try server.add(
            path: Self.characteristic,
            interfaces: [
                Self.characteristicInterface: [
                    "UUID": .string("e97d3b10-251d-470a-a062-fa1922dfa9a8"),
                    "Service": .objectPath(Self.device + "/service0010"),
                    "Flags": .strings(["write-without-response", "notify"]),
                    "Value": .bytes([]), "Notifying": .bool(false), "MTU": .uint16(23)
                ]
            ],
            methods: { call in
                guard call.member == "WriteValue" else {
                    throw DBusError(name: DBusErrorName.unknownMethod.rawValue, message: call.member)
                }
                try call.expectSignature("aya{sv}")
                let options = try call.arguments.argument(1).properties()
                guard try options["type"]?.string() == "command" else {
                    throw DBusError(name: "org.bluez.Error.NotSupported", message: "only write-without-response")
                }
                let bytes = try call.arguments.argument(0).bytes()
                writes.append(bytes)
                return []
            })
    }

    func call(_ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = []) async throws
        -> [DBusValue]
    {
        try await pair.client.call(
            destination: pair.server.uniqueName, path: path, interface: interface,
            method: method, arguments: arguments)
    }

    @Test func answersGetManagedObjectsInTheShapeBlueZUses() async throws {
        let reply = try await call("/", DBusStandard.objectManager, "GetManagedObjects")
        try reply.expectSignature("a{oa{sa{sv}}}")
        let objects = try reply.argument(0).managedObjects()
        #expect(
            objects.keys.sorted() == ["/org/bluez/hci0", Self.device, Self.device + "/service0010", Self.characteristic]
        )
        let characteristic = try #require(objects[Self.characteristic]?[Self.characteristicInterface])
        #expect(try characteristic["Flags"]?.strings() == ["write-without-response", "notify"])
        #expect(try characteristic["MTU"]?.uint16() == 23)
        #expect(try characteristic["Value"]?.bytes() == [])
        #expect(try characteristic["Service"]?.objectPath() == Self.device + "/service0010")
        #expect(objects[Self.device]?[DBusStandard.properties] == [:])  // BlueZ lists the standard interfaces too
    }

    @Test func routesOtherMethodsToTheObjectHandler() async throws {
        let options = DBusValue.propertyMap(["type": .string("command")])
        _ = try await call(
            Self.characteristic, Self.characteristicInterface, "WriteValue", [.bytes([0x01, 0x00, 0x10]), options])
        _ = try await call(Self.characteristic, Self.characteristicInterface, "WriteValue", [.bytes([0x02]), options])
        #expect(writes.values == [[0x01, 0x00, 0x10], [0x02]])
        let refused = await #expect(throws: DBusError.self) {
            try await call(
                Self.characteristic, Self.characteristicInterface, "WriteValue",
                [.bytes([1]), .propertyMap(["type": .string("request")])])
        }
        #expect(refused?.name == "org.bluez.Error.NotSupported")
        let unknown = await #expect(throws: DBusError.self) {
            try await call(Self.device, "org.bluez.Device1", "Connect")
        }
        #expect(unknown?.hasName(.unknownMethod) == true)
    }

    @Test func answersPropertiesGetGetAllAndSet() async throws {
        let name = try await call(
            Self.device, DBusStandard.properties, "Get", [.string("org.bluez.Device1"), .string("Name")])
        try name.expectSignature("v")
        #expect(try name.argument(0).string() == "BBC micro:bit [zavog]")
        let all = try await call(Self.device, DBusStandard.properties, "GetAll", [.string("org.bluez.Device1")])
        #expect(try all.argument(0).properties()["RSSI"] == .int16(-58))

        let readOnly = await #expect(throws: DBusError.self) {
            try await call(
                Self.device, DBusStandard.properties, "Set",
                [.string("org.bluez.Device1"), .string("Name"), .variant(.string("x"))])
        }
        #expect(readOnly?.hasName(.propertyReadOnly) == true)
        let missing = await #expect(throws: DBusError.self) {
            try await call(Self.device, DBusStandard.properties, "Get", [.string("org.bluez.Device1"), .string("Nope")])
        }
        #expect(missing?.hasName(.unknownProperty) == true)

        let changes = try await pair.client.signals(matching: .propertiesChanged(path: "/org/bluez/hci0"))
        _ = try await call(
            "/org/bluez/hci0", DBusStandard.properties, "Set",
            [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.bool(false))])
        #expect(server.properties(path: "/org/bluez/hci0", interface: "org.bluez.Adapter1")?["Powered"] == .bool(false))
        let signal = try await collect(1, from: changes)
        #expect(try signal.first?.arguments.argument(1).properties() == ["Powered": .bool(false)])
        let wrongType = await #expect(throws: DBusError.self) {
            try await call(
                "/org/bluez/hci0", DBusStandard.properties, "Set",
                [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.string("yes"))])
        }
        #expect(wrongType?.hasName(.invalidArgs) == true)
    }

    @Test func emitsPropertiesChangedForEveryNotificationEvenWhenRepeated() async throws {
        let notifications = try await pair.client.signals(
            matching: .propertiesChanged(path: Self.characteristic, interface: Self.characteristicInterface))
        for value: [UInt8] in [[0x01, 0xFF], [0x01, 0xFF], [0x01, 0xAA]] {
            try server.setProperties(
                path: Self.characteristic, interface: Self.characteristicInterface, ["Value": .bytes(value)])
        }
        let received = try await collect(3, from: notifications)
        #expect(
            try received.map { try $0.arguments.argument(1).properties()["Value"]?.bytes() } == [
                [0x01, 0xFF], [0x01, 0xFF], [0x01, 0xAA]
            ])
        #expect(received.allSatisfy { $0.arguments.signature == "sa{sv}as" })
    }

    @Test func emitsInterfacesAddedAndRemoved() async throws {
        // A round trip through the server makes the bus route the signals init emitted first,
        // so the subscription below only sees the new ones.
        _ = try await call("/", DBusStandard.peer, "Ping")
        let added = try await pair.client.signals(matching: .objectManager(member: "InterfacesAdded"))
        let removed = try await pair.client.signals(matching: .objectManager(member: "InterfacesRemoved"))
        let path = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
        try server.add(
            path: path,
            interfaces: ["org.bluez.Device1": ["Address": .string("C0:FF:EE:00:00:01"), "RSSI": .int16(-70)]])
        let addition = try #require(try await collect(1, from: added).first)
        #expect(addition.arguments.signature == "oa{sa{sv}}")
        #expect(try addition.arguments.argument(0).objectPath() == path)
        let interfaces = try addition.arguments.argument(1).stringKeyed()
        #expect(try interfaces["org.bluez.Device1"]?.properties()["RSSI"] == .int16(-70))

        try server.remove(path: path)
        let removal = try #require(try await collect(1, from: removed).first)
        #expect(removal.arguments.signature == "oas")
        #expect(try removal.arguments.argument(1).strings().contains("org.bluez.Device1"))
        let gone = await #expect(throws: DBusError.self) {
            try await call(path, DBusStandard.properties, "GetAll", [.string("org.bluez.Device1")])
        }
        #expect(gone?.hasName(.unknownObject) == true)
    }

    @Test func introspectsInterfacesPropertiesAndChildren() async throws {
        let xml = try await call(Self.device, DBusStandard.introspectable, "Introspect").argument(0).string()
        #expect(xml.contains("<interface name=\"org.bluez.Device1\">"))
        #expect(xml.contains("<property name=\"RSSI\" type=\"n\" access=\"read\"/>"))
        #expect(xml.contains("<node name=\"service0010\"/>"))
        let root = try await call("/", DBusStandard.introspectable, "Introspect").argument(0).string()
        #expect(root.contains(DBusStandard.objectManager))
        #expect(root.contains("<node name=\"org\"/>"))
    }

    @Test func introspectsIntermediateNodesAndDescribedMembers() async throws {
        server.describe(
            interface: "org.bluez.Device1",
            [
                .method("Connect"), .method("ConnectProfile", ["s"]),
                .signal("Disconnected", ["s", "s"])
            ])
        let org = try await call("/org", DBusStandard.introspectable, "Introspect").argument(0).string()
        #expect(org.contains("<node name=\"bluez\"/>"))
        let hci = try await call("/org/bluez", DBusStandard.introspectable, "Introspect").argument(0).string()
        #expect(hci.contains("<node name=\"hci0\"/>"))
        let device = try await call(Self.device, DBusStandard.introspectable, "Introspect").argument(0).string()
        #expect(device.contains("<method name=\"ConnectProfile\"><arg type=\"s\" direction=\"in\"/></method>"))
        #expect(device.contains("<signal name=\"Disconnected\"><arg type=\"s\"/><arg type=\"s\"/></signal>"))
        // An intermediate node is not an object: other calls on it find none.
        let error = await #expect(throws: DBusError.self) {
            try await call("/org/bluez", DBusStandard.properties, "GetAll", [.string("org.bluez.Device1")])
        }
        #expect(error?.hasName(.unknownObject) == true)
    }

    @Test func answersAConcurrentObjectWhileAnotherCallOnItWaits() async throws {
        let gate = Gate()
        let path = "/org/bluez/hci0/dev_D4_E5_F6_01_02_04"
        try server.add(
            path: path, interfaces: ["org.bluez.Device1": ["Connected": .bool(false)]],
            methods: { call in
                if call.member == "Connect" { await gate.wait() }
                return []
            }, concurrent: true)
        let pending = Task { try await call(path, "org.bluez.Device1", "Connect") }
        // While Connect waits for the gate, other calls on the same object and elsewhere are answered.
        _ = try await call(path, "org.bluez.Device1", "Disconnect")
        let all = try await call(path, DBusStandard.properties, "GetAll", [.string("org.bluez.Device1")])
        #expect(try all.argument(0).properties()["Connected"]?.bool() == false)
        gate.open()
        _ = try await pending.value
    }

    @Test func refusesObjectsOutsideTheRoot() throws {
        let nested = try DBusObjectServer(connection: pair.client, rootPath: "/org/example")
        #expect(throws: DBusError.self) { try nested.add(path: "/elsewhere", interfaces: [:]) }
    }
}
