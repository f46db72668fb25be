import DBus
import Testing
import TestSupport

/// Values sent through a real bus to an echo object and back.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct ValueRoundTripTests {
    let pair: BusPair

    init() throws {
        pair = try BusPair()
        try pair.server.export(path: "/test/echo") { call in call.arguments }
    }

    func echo(_ values: [DBusValue]) async throws -> [DBusValue] {
        try await pair.client.call(
            destination: pair.server.uniqueName, path: "/test/echo",
            interface: "org.example.Echo", method: "Echo", arguments: values)
    }

    @Test func roundTripsEveryBasicType() async throws {
        let values: [DBusValue] = [
            .byte(0), .byte(255), .bool(true), .bool(false),
            .int16(.min), .uint16(.max), .int32(-1), .uint32(.max),
            .int64(.min), .uint64(.max), .double(-1.5e300), .double(0.1),
            .string(""), .string("héllo ✓ micro:bit"), .objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"),
            .signature("a{oa{sa{sv}}}")
        ]
        let back = try await echo(values)
        #expect(back == values)
        #expect(back.signature == "yybbnqiuxtddssog")
    }

    @Test func roundTripsNestedPropertyMaps() async throws {
        let inner = DBusValue.propertyMap(["offset": .uint16(20), "type": .string("command")])
        let map = DBusValue.propertyMap([
            "Options": inner,
            "Flags": .strings(["write-without-response", "notify"]),
            "ManufacturerData": .dictionary(
                keySignature: "q", valueSignature: "v",
                [
                    DBusDictEntry(key: .uint16(0x0059), value: .variant(.bytes([1, 2, 3])))
                ])
        ])
        let back = try await echo([map])
        #expect(back == [map])
        #expect(back.signature == "a{sv}")
        let options = try back.argument(0).properties()
        #expect(try options["Options"]?.properties()["type"]?.string() == "command")
        #expect(try options["Options"]?.properties()["offset"]?.uint16() == 20)
    }

    @Test(arguments: [0, 1, 65536])
    func roundTripsByteArrays(count: Int) async throws {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let back = try await echo([.bytes(bytes)])
        #expect(try back.argument(0).bytes() == bytes)
        #expect(back.signature == "ay")
    }

    @Test func roundTripsVariantsOfVariants() async throws {
        let value = DBusValue.variant(.variant(.variant(.uint16(7))))
        let back = try await echo([value])
        #expect(back == [value])
        #expect(try back.argument(0).uint16() == 7)
    }

    @Test func keepsTheTypeOfEmptyArrays() async throws {
        let values: [DBusValue] = [
            .strings([]),
            .propertyMap([:]),
            .array(elementSignature: "ay", []),
            .array(elementSignature: "(yq)", []),
            .managedObjects([:]),
            .bytes([])
        ]
        let back = try await echo(values)
        #expect(back.signature == "asa{sv}aaya(yq)a{oa{sa{sv}}}ay")
        #expect(back == values)
    }

    @Test func roundTripsStructsAndArraysOfStructs() async throws {
        let record = DBusValue.structure([.byte(1), .uint16(0x1c00), .bytes([0xAA, 0xBB])])
        let values: [DBusValue] = [record, .array(elementSignature: "(yqay)", [record, record])]
        let back = try await echo(values)
        #expect(back == values)
        #expect(try back.argument(0).fields().count == 3)
    }

    @Test func roundTripsManagedObjectsShape() async throws {
        let objects: [String: [String: [String: DBusValue]]] = [
            "/org/bluez/hci0": [
                "org.bluez.Adapter1": ["Powered": .bool(true), "Address": .string("00:01:02:03:04:05")]
            ],
            "/org/bluez/hci0/dev_AA": ["org.bluez.Device1": ["RSSI": .int16(-60), "UUIDs": .strings([])]]
        ]
        let back = try await echo([.managedObjects(objects)])
        #expect(back.signature == "a{oa{sa{sv}}}")
        #expect(try back.argument(0).managedObjects() == objects)
    }
}
