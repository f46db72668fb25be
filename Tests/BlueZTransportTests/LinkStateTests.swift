import DBus
import Testing
@testable import BlueZTransport
import Transport
import PartialFlashingFrames

@Suite struct LinkStateTests {
    private let charPath = Fixtures.microbit + "/service0010/char0011"

    private func connectedState() throws -> BlueZLinkState {
        let tree = try BlueZObjectTree(reply: Fixtures.reply())
        var s = BlueZLinkState(
            devicePath: Fixtures.microbit, device: tree.devices.first { $0.path == Fixtures.microbit })
        s.gatt = tree.gatt(under: Fixtures.microbit)
        s.gattDirty = false
        s.linkUp = true
        return s
    }

    private func signal(_ path: String, _ interface: String, _ member: String, _ args: [DBusValue]) -> DBusSignal {
        DBusSignal(sender: ":1.5", path: path, interface: interface, member: member, arguments: args)
    }

    private func valueChanged(_ value: DBusValue, path: String? = nil) -> BlueZEvent? {
        BlueZEvent(
            signal(
                path ?? charPath, DBusStandard.properties, "PropertiesChanged",
                [.string("org.bluez.GattCharacteristic1"), .propertyMap(["Value": value]), .strings([])]))
    }

    @Test("a Value change on a characteristic is a notification of that characteristic")
    func notification() throws {
        var s = try connectedState()
        let event = try #require(valueChanged(.bytes([0x01, 0xFF])))
        #expect(s.apply(event) == [.notification(PartialFlashingGATT.characteristic, [0x01, 0xFF])])
        let other = try #require(valueChanged(.bytes([1]), path: Fixtures.stranger + "/service0001/char0002"))
        #expect(s.apply(other).isEmpty)
    }

    @Test("notifications of the wrong type or longer than an attribute are dropped and counted")
    func hostileNotifications() throws {
        var s = try connectedState()
        for bad: DBusValue in [.string("01ff"), .uint32(7), .bytes(Array(repeating: 0xAA, count: 4096))] {
            #expect(s.apply(try #require(valueChanged(bad))).isEmpty)
        }
        #expect(s.droppedNotifications == 3)
        #expect(s.apply(try #require(valueChanged(.bytes(Array(repeating: 1, count: 512))))).count == 1)
    }

    @Test("the first value BlueZ never sends is kept as the violation, in words; later ones do not replace it")
    func firstViolationIsKept() throws {
        var s = try connectedState()
        #expect(s.violation == nil)
        _ = s.apply(try #require(valueChanged(.bytes(Array(repeating: 0xAA, count: 4096)))))
        #expect(
            s.violation
                == "a notification that cannot come from a board (4096 bytes, more than an attribute holds: 512)")
        _ = s.apply(try #require(valueChanged(.string("01ff"))))
        #expect(s.violation?.contains("4096 bytes") == true)

        var typed = try connectedState()
        _ = typed.apply(try #require(valueChanged(.string("01ff"))))
        #expect(typed.violation == "a notification that cannot come from a board (of type 's' instead of bytes)")
    }

    @Test(
        "a notification that only invalidates Value, and Connected of the wrong type, are violations; a good value is not"
    )
    func otherViolations() throws {
        var s = try connectedState()
        _ = s.apply(
            .propertiesChanged(
                path: charPath, interface: "org.bluez.GattCharacteristic1", changed: [:], invalidated: ["Value"]))
        #expect(s.violation?.contains("Value invalidated") == true)
        #expect(s.droppedNotifications == 1)

        var c = try connectedState()
        _ = c.apply(
            .propertiesChanged(
                path: Fixtures.microbit, interface: "org.bluez.Device1", changed: ["Connected": .int32(0)],
                invalidated: []))
        #expect(c.violation == "Connected of type 'i' instead of a boolean")

        var good = try connectedState()
        _ = good.apply(try #require(valueChanged(.bytes(Array(repeating: 1, count: 512)))))
        _ = good.apply(
            .propertiesChanged(
                path: Fixtures.microbit, interface: "org.bluez.Device1", changed: ["RSSI": .int16(-40)], invalidated: []
            ))
        #expect(good.violation == nil)
    }

    @Test("Connected=false ends the link once, as a remote termination")
    func remoteDisconnect() throws {
        var s = try connectedState()
        let off = try #require(
            BlueZEvent(
                signal(
                    Fixtures.microbit, DBusStandard.properties, "PropertiesChanged",
                    [.string("org.bluez.Device1"), .propertyMap(["Connected": .bool(false)]), .strings([])])))
        #expect(s.apply(off) == [.linkLost(.remoteTerminated)])
        #expect(s.apply(off).isEmpty)
        #expect(s.device?.connected == false)
    }

    @Test(
        "a read of ServicesResolved answered before BlueZ signalled true leaves it true, in whichever order the two arrive"
    )
    func servicesResolvedReadNeverUndoesANewerSignal() throws {
        let resolved = try #require(
            BlueZEvent(
                signal(
                    Fixtures.microbit, DBusStandard.properties, "PropertiesChanged",
                    [.string("org.bluez.Device1"), .propertyMap(["ServicesResolved": .bool(true)]), .strings([])])))
        // BlueZ answered the read (false), then resolved the services and signalled it; the
        // signal is applied before the reply wakes the reader.
        var signalFirst = try connectedState()
        signalFirst.device?.servicesResolved = false
        let asked = signalFirst.servicesResolvedNews
        _ = signalFirst.apply(resolved)
        signalFirst.read(servicesResolved: false, askedAt: asked)
        #expect(signalFirst.device?.servicesResolved == true)
        // The same, the reply applied first.
        var replyFirst = try connectedState()
        replyFirst.device?.servicesResolved = false
        replyFirst.read(servicesResolved: false, askedAt: replyFirst.servicesResolvedNews)
        #expect(replyFirst.device?.servicesResolved == false)
        _ = replyFirst.apply(resolved)
        #expect(replyFirst.device?.servicesResolved == true)
        // No signal meanwhile: the reply is what BlueZ has.
        var replyOnly = try connectedState()
        replyOnly.device?.servicesResolved = false
        replyOnly.read(servicesResolved: true, askedAt: replyOnly.servicesResolvedNews)
        #expect(replyOnly.device?.servicesResolved == true)
    }

    @Test("the reason of a Disconnected signal is used for the link loss that follows")
    func disconnectedReason() throws {
        var s = try connectedState()
        let why = try #require(
            BlueZEvent(
                signal(
                    Fixtures.microbit, "org.bluez.Device1", "Disconnected",
                    [.string("org.bluez.Reason.Timeout"), .string("Connection timeout")])))
        #expect(s.apply(why).isEmpty)
        let off = try #require(
            BlueZEvent(
                signal(
                    Fixtures.microbit, DBusStandard.properties, "PropertiesChanged",
                    [.string("org.bluez.Device1"), .propertyMap(["Connected": .bool(false)]), .strings([])])))
        #expect(s.apply(off) == [.linkLost(.supervisionTimeout)])
    }

    @Test(
        "the loss of the last link is kept until a new link is up, and a link closed without a signal is a local loss")
    func lastLossUntilTheNextLink() throws {
        var s = try connectedState()
        let off = BlueZEvent.propertiesChanged(
            path: Fixtures.microbit, interface: "org.bluez.Device1", changed: ["Connected": .bool(false)],
            invalidated: [])
        #expect(s.apply(off) == [.linkLost(.remoteTerminated)])
        #expect(s.lastLoss == .remoteTerminated)
        // A second signal for the same loss is no second loss, and giving up a dead link announces nothing.
        #expect(s.apply(off).isEmpty)
        #expect(s.forceDown() == nil)
        #expect(s.lastLoss == .remoteTerminated)
        s.linkEstablished()
        #expect(s.linkUp && s.lastLoss == nil)
        // BlueZ did not confirm a Disconnect in time: the link is given up as closed here.
        #expect(s.forceDown() == .localTerminated)
        #expect(!s.linkUp && s.lastLoss == .localTerminated)
    }

    @Test("a local disconnect is reported as local")
    func localDisconnect() throws {
        var s = try connectedState()
        s.closingLocally = true
        #expect(
            s.apply(
                .propertiesChanged(
                    path: Fixtures.microbit, interface: "org.bluez.Device1",
                    changed: ["Connected": .bool(false)], invalidated: [])) == [.linkLost(.localTerminated)])
    }

    @Test("the device object going away ends the link; GATT objects coming or going mark the table stale")
    func objectChanges() throws {
        var s = try connectedState()
        #expect(
            s.apply(
                .interfacesAdded(path: Fixtures.microbit + "/service0040", interfaces: ["org.bluez.GattService1": [:]])
            ).isEmpty)
        #expect(s.gattDirty)
        s.gattDirty = false
        #expect(
            s.apply(
                .interfacesRemoved(
                    path: Fixtures.microbit + "/service0010/char0011", interfaces: ["org.bluez.GattCharacteristic1"])
            ).isEmpty)
        #expect(s.gattDirty)
        #expect(
            s.apply(.interfacesRemoved(path: Fixtures.microbit, interfaces: ["org.bluez.Device1"])) == [
                .linkLost(.remoteTerminated)
            ])
        #expect(s.device == nil)
    }

    @Test("signals of the wrong shape are not events")
    func hostileSignals() {
        let cases: [DBusSignal] = [
            signal(charPath, DBusStandard.properties, "PropertiesChanged", []),
            signal(
                charPath, DBusStandard.properties, "PropertiesChanged", [.uint32(1), .propertyMap([:]), .strings([])]),
            signal(
                charPath, DBusStandard.properties, "PropertiesChanged",
                [.string("org.bluez.GattCharacteristic1"), .string("Value")]),
            signal("/", DBusStandard.objectManager, "InterfacesAdded", [.string("/not/a/path"), .propertyMap([:])]),
            signal("/", DBusStandard.objectManager, "InterfacesAdded", [.objectPath("/org/bluez/hci0/dev_X")]),
            signal(
                "/", DBusStandard.objectManager, "InterfacesRemoved", [.objectPath("/org/bluez/hci0/dev_X"), .uint16(3)]
            ),
            signal(Fixtures.microbit, "org.bluez.Device1", "Disconnected", [.int32(3)]),
            signal(Fixtures.microbit, "org.bluez.Device1", "SomethingNew", [.string("x")])
        ]
        for s in cases { #expect(BlueZEvent(s) == nil, "\(s.member) \(s.arguments)") }
        // Missing trailing arguments are tolerated where BlueZ's meaning is clear.
        #expect(
            BlueZEvent(
                signal(
                    charPath, DBusStandard.properties, "PropertiesChanged",
                    [.string("org.bluez.GattCharacteristic1"), .propertyMap(["Value": .bytes([1])])])) != nil)
    }

    @Test("the scan keeps devices of its adapter current from the signals")
    func scanApply() throws {
        var devices: [String: BlueZDevice] = [:]
        let props: [String: DBusValue] = [
            "Address": .string("F0:0D:00:00:00:07"), "Name": .string("BBC micro:bit [tupov]"), "RSSI": .int16(-70)
        ]
        let path = "/org/bluez/hci0/dev_F0_0D_00_00_00_07"
        #expect(
            BlueZScanner.apply(
                .interfacesAdded(path: path, interfaces: ["org.bluez.Device1": props]), to: &devices,
                adapter: "/org/bluez/hci0") == path)
        #expect(
            BlueZScanner.apply(
                .interfacesAdded(
                    path: "/org/bluez/hci1/dev_F0_0D_00_00_00_08", interfaces: ["org.bluez.Device1": props]),
                to: &devices, adapter: "/org/bluez/hci0") == nil)
        _ = BlueZScanner.apply(
            .propertiesChanged(
                path: path, interface: "org.bluez.Device1", changed: ["RSSI": .int16(-50)], invalidated: []),
            to: &devices, adapter: "/org/bluez/hci0")
        #expect(devices[path]?.rssi == -50)
        _ = BlueZScanner.apply(
            .interfacesRemoved(path: path, interfaces: ["org.bluez.Device1"]), to: &devices, adapter: "/org/bluez/hci0")
        #expect(devices.isEmpty)
    }

    @Test("the adapter is the one named, else the first switched on, with advice when there is none")
    func adapterChoice() async throws {
        func tree(_ adapters: [(String, Bool)]) -> BlueZObjectTree {
            BlueZObjectTree(
                objects: Dictionary(
                    uniqueKeysWithValues: adapters.map {
                        ("/org/bluez/\($0.0)", ["org.bluez.Adapter1": ["Powered": DBusValue.bool($0.1)]])
                    }))
        }
        let pick = { (name: String?, t: BlueZObjectTree) throws(BlueZError) -> String in
            try BlueZScanner.chooseAdapter(named: name, in: t).name
        }
        #expect(try pick(nil, tree([("hci0", false), ("hci1", true)])) == "hci1")
        #expect(try pick("hci0", tree([("hci0", true), ("hci1", true)])) == "hci0")
        #expect(throws: BlueZError.adapterOff("hci0")) { try pick("hci0", tree([("hci0", false)])) }
        #expect(throws: BlueZError.adapterOff("hci0")) { try pick(nil, tree([("hci0", false)])) }
        #expect(throws: BlueZError.noAdapter(requested: "hci3", available: ["hci0"])) {
            try pick("hci3", tree([("hci0", true)]))
        }
        #expect(throws: BlueZError.noAdapter(requested: nil, available: [])) { try pick(nil, tree([])) }
    }
}
