import DBus
import Testing
@testable import BlueZTransport
import Transport
import PartialFlashingFrames
import SMP

@Suite struct ObjectTreeTests {
    @Test("a GetManagedObjects reply gives the adapter, the devices and their properties")
    func readsAdaptersAndDevices() throws {
        let tree = try BlueZObjectTree(reply: Fixtures.reply())
        #expect(tree.adapters == [BlueZAdapter(path: Fixtures.adapter, address: "00:AA:01:00:00:01", powered: true)])
        #expect(tree.adapters[0].name == "hci0")
        let microbit = try #require(tree.devices.first { $0.path == Fixtures.microbit })
        #expect(microbit.address == "F0:0D:00:00:00:01")
        #expect(microbit.adapterPath == Fixtures.adapter)
        #expect(microbit.name == "BBC micro:bit [zotig]")
        #expect(microbit.rssi == -58)
        #expect(microbit.connected && microbit.servicesResolved && !microbit.paired)
        #expect(microbit.services.contains(PartialFlashingGATT.service))
        #expect(microbit.services.contains(SMPGATT.service))
    }

    @Test("an alias that is only the address does not count as a name")
    func aliasOfAddressIsNoName() throws {
        let stranger = try #require(Fixtures.device(Fixtures.stranger))
        #expect(stranger.name == nil)
        #expect(stranger.label == "11:22:33:44:55:66")
        #expect(!stranger.looksFlashable)
    }

    @Test("the GATT table links characteristics to their services by path and reads the MTU")
    func resolvesGATT() throws {
        var objects = Fixtures.tree(mtu: .uint16(247))
        // A characteristic that claims a service of another device must not be picked.
        objects[Fixtures.microbit + "/service0030/char0031"] = [
            "org.bluez.GattCharacteristic1": [
                "UUID": .string(SMPGATT.characteristic.characteristic.uuidString),
                "Service": .objectPath(Fixtures.stranger + "/service0001")
            ]
        ]
        let table = try BlueZObjectTree(reply: Fixtures.reply(objects)).gatt(under: Fixtures.microbit)
        #expect(table.services == [PartialFlashingGATT.service, SMPGATT.service, BLEUUID("1801")])
        #expect(
            table.characteristics[PartialFlashingGATT.characteristic] == Fixtures.microbit + "/service0010/char0011")
        #expect(table.characteristics[SMPGATT.characteristic] == Fixtures.microbit + "/service0020/char0021")
        #expect(table.characteristics.count == 2)
        #expect(table.mtu == 247)
    }

    @Test("an MTU property of the wrong type or out of range is ignored")
    func badMTUIgnored() throws {
        for bad: DBusValue in [.uint32(247), .string("247"), .uint16(5), .uint16(9000)] {
            let table = try BlueZObjectTree(reply: Fixtures.reply(Fixtures.tree(mtu: bad))).gatt(
                under: Fixtures.microbit)
            #expect(table.mtu == nil, "MTU \(bad)")
            #expect(table.characteristics.count == 2)
        }
    }

    @Test("a device without a usable Address is skipped; odd optional properties count as absent")
    func hostileDeviceProperties() throws {
        var objects = Fixtures.tree()
        objects["/org/bluez/hci0/dev_A"] = ["org.bluez.Device1": ["Name": .string("BBC micro:bit [nopad]")]]
        objects["/org/bluez/hci0/dev_B"] = ["org.bluez.Device1": ["Address": .int32(5)]]
        objects["/org/bluez/hci0/dev_C"] = ["org.bluez.Device1": ["Address": .string("not an address")]]
        objects[Fixtures.microbit]?["org.bluez.Device1"]?["RSSI"] = .string("-58")
        objects[Fixtures.microbit]?["org.bluez.Device1"]?["UUIDs"] = .string(SMPGATT.service.uuidString)
        objects[Fixtures.microbit]?["org.bluez.Device1"]?["Connected"] = .uint32(1)
        let tree = try BlueZObjectTree(reply: Fixtures.reply(objects))
        #expect(Set(tree.devices.map(\.path)) == [Fixtures.microbit, Fixtures.stranger])
        let microbit = try #require(tree.devices.first { $0.path == Fixtures.microbit })
        #expect(microbit.rssi == nil && microbit.services.isEmpty && !microbit.connected)
        #expect(microbit.name == "BBC micro:bit [zotig]")
    }

    @Test("a reply that is not a{oa{sa{sv}}} is an unexpected-reply error, not a crash")
    func wrongReplyShape() {
        for reply: [DBusValue] in [
            [], [.strings(["/org/bluez"])], [.string("x")],
            [
                .dictionary(
                    keySignature: "o", valueSignature: "s", [DBusDictEntry(key: .objectPath("/a"), value: .string("b"))]
                )
            ]
        ] {
            #expect(throws: BlueZError.self) { try BlueZObjectTree(reply: reply) }
            do { _ = try BlueZObjectTree(reply: reply) } catch let error as BlueZError {
                guard case .unexpectedReply = error else { Issue.record("got \(error)"); continue }
                #expect(error.description.contains("unexpected reply"))
            } catch { Issue.record("got \(error)") }
        }
    }

    @Test("PropertiesChanged updates a device and ignores values of the wrong type")
    func devicePropertiesChanged() throws {
        var d = try #require(Fixtures.device())
        d.apply(changed: ["RSSI": .int16(-40), "Connected": .bool(false), "ServicesResolved": .string("no")])
        #expect(d.rssi == -40 && !d.connected && d.servicesResolved)
        d.apply(changed: [:], invalidated: ["RSSI"])
        #expect(d.rssi == nil)
    }

    @Test("the device path is built from the adapter and the address")
    func devicePath() {
        #expect(
            BlueZDevice.path(adapter: "/org/bluez/hci1", address: "f0:0d:00:00:00:01")
                == "/org/bluez/hci1/dev_F0_0D_00_00_00_01")
        #expect(
            BlueZDevice.isAddress("F0:0D:00:00:00:01") && !BlueZDevice.isAddress("F0:0D:00:00:00")
                && !BlueZDevice.isAddress("G0:0D:00:00:00:01"))
    }
}
