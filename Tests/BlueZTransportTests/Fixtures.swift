import DBus
@testable import BlueZTransport
import Transport
import PartialFlashingFrames
import SMP

/// A BlueZ object tree as bluetoothd 5.66 reports it for one adapter, a connected micro:bit
/// with its partial-flashing and SMP services resolved, and a stranger.
enum Fixtures {
    static let adapter = "/org/bluez/hci0"
    static let microbit = "/org/bluez/hci0/dev_F0_0D_00_00_00_01"
    static let stranger = "/org/bluez/hci0/dev_11_22_33_44_55_66"

    static func tree(mtu: DBusValue = .uint16(23)) -> [String: [String: [String: DBusValue]]] {
        [
            "/org/bluez": ["org.bluez.AgentManager1": [:], "org.bluez.ProfileManager1": [:]],
            adapter: [
                "org.bluez.Adapter1": [
                    "Address": .string("00:AA:01:00:00:01"), "Powered": .bool(true),
                    "Discovering": .bool(false), "Name": .string("host")
                ]
            ],
            microbit: [
                "org.bluez.Device1": [
                    "Address": .string("F0:0D:00:00:00:01"), "AddressType": .string("random"),
                    "Name": .string("BBC micro:bit [zotig]"), "Alias": .string("BBC micro:bit [zotig]"),
                    "RSSI": .int16(-58), "Connected": .bool(true), "ServicesResolved": .bool(true),
                    "Paired": .bool(false), "Trusted": .bool(false), "Adapter": .objectPath(adapter),
                    "UUIDs": .strings([
                        PartialFlashingGATT.service.uuidString, SMPGATT.service.uuidString,
                        "00001801-0000-1000-8000-00805f9b34fb"
                    ])
                ]
            ],
            microbit + "/service0001": [
                "org.bluez.GattService1": [
                    "UUID": .string("00001801-0000-1000-8000-00805f9b34fb"), "Primary": .bool(true),
                    "Device": .objectPath(microbit), "Handle": .uint16(1)
                ]
            ],
            microbit + "/service0010": [
                "org.bluez.GattService1": [
                    "UUID": .string(PartialFlashingGATT.service.uuidString), "Primary": .bool(true),
                    "Device": .objectPath(microbit), "Handle": .uint16(16)
                ]
            ],
            microbit + "/service0010/char0011": [
                "org.bluez.GattCharacteristic1": [
                    "UUID": .string(PartialFlashingGATT.characteristic.characteristic.uuidString),
                    "Service": .objectPath(microbit + "/service0010"), "Value": .bytes([]),
                    "Flags": .strings(["write-without-response", "notify"]), "Notifying": .bool(false), "MTU": mtu
                ]
            ],
            microbit + "/service0020": [
                "org.bluez.GattService1": [
                    "UUID": .string(SMPGATT.service.uuidString), "Primary": .bool(true),
                    "Device": .objectPath(microbit), "Handle": .uint16(32)
                ]
            ],
            microbit + "/service0020/char0021": [
                "org.bluez.GattCharacteristic1": [
                    "UUID": .string(SMPGATT.characteristic.characteristic.uuidString),
                    "Service": .objectPath(microbit + "/service0020"), "Value": .bytes([]),
                    "Flags": .strings(["write-without-response", "notify"]), "Notifying": .bool(false), "MTU": mtu
                ]
            ],
            stranger: [
                "org.bluez.Device1": [
                    "Address": .string("11:22:33:44:55:66"), "Alias": .string("11-22-33-44-55-66"),
                    "RSSI": .int16(-90), "Connected": .bool(false)
                ]
            ]
        ]
    }

    /// The tree as it arrives on the wire: one `a{oa{sa{sv}}}` argument.
    static func reply(_ objects: [String: [String: [String: DBusValue]]] = tree()) -> [DBusValue] {
        [.managedObjects(objects)]
    }

    static func device(_ path: String = microbit, in objects: [String: [String: [String: DBusValue]]] = tree())
        -> BlueZDevice?
    {
        try? BlueZObjectTree(reply: reply(objects)).devices.first { $0.path == path }
    }
}
