import DBus
import Transport

/// What a `BlueZDeviceTransport` knows about its device, updated from BlueZ's signals.
/// Pure: `apply` returns what the transport must announce, it performs nothing itself.
struct BlueZLinkState: Sendable {
    var devicePath: String
    /// The device as BlueZ last described it; nil while BlueZ has no object for it.
    var device: BlueZDevice?
    var gatt = GATTTable()
    /// True when the GATT objects below the device changed since `gatt` was read.
    var gattDirty = true
    var mtu = BlueZLimits.defaultMTU
    /// True between a successful connect and the link loss that ends it.
    var linkUp = false
    /// Set by `disconnect()`, so the loss that follows counts as local.
    var closingLocally = false
    /// The reason of BlueZ's `Disconnected` signal, consumed by the `Connected=false` after it.
    var pendingReason: DisconnectReason?
    /// Notification values dropped because they could not be a real ATT value.
    var droppedNotifications = 0
    /// Notification values passed on.
    var deliveredNotifications = 0

    /// What an event means for the transport.
    enum Effect: Equatable {
        case linkLost(DisconnectReason)
        case notification(GATTCharacteristic, [UInt8])
    }

    mutating func apply(_ event: BlueZEvent) -> [Effect] {
        switch event {
        case let .propertiesChanged(path, interface, changed, invalidated):
            if path == devicePath, interface == BlueZNames.device {
                device?.apply(changed: changed, invalidated: invalidated)
                if case .bool(false)? = changed["Connected"] { return loseLink() }
                return []
            }
            guard interface == BlueZNames.gattCharacteristic, let value = changed["Value"],
                  let key = gatt.characteristics.first(where: { $0.value == path })?.key else { return [] }
            guard let bytes = try? value.bytes(), bytes.count <= BlueZLimits.maximumValueLength else {
                droppedNotifications += 1
                return []
            }
            deliveredNotifications += 1
            return [.notification(key, bytes)]
        case let .interfacesAdded(path, interfaces):
            if path == devicePath, let p = interfaces[BlueZNames.device] {
                device = BlueZDevice(path: path, properties: p)
            } else if path.hasPrefix(devicePath + "/") {
                gattDirty = true
            }
            return []
        case let .interfacesRemoved(path, interfaces):
            if path == devicePath, interfaces.contains(BlueZNames.device) {
                device = nil
                gattDirty = true
                return loseLink()
            }
            if path.hasPrefix(devicePath + "/") { gattDirty = true }
            return []
        case let .deviceDisconnected(path, reason, message):
            if path == devicePath { pendingReason = Self.reason(reason, message) }
            return []
        }
    }

    private mutating func loseLink() -> [Effect] {
        guard linkUp else { return [] }
        linkUp = false
        let reason = pendingReason ?? (closingLocally ? .localTerminated : .remoteTerminated)
        pendingReason = nil
        return [.linkLost(reason)]
    }

    /// BlueZ's `Disconnected` reasons (`org.bluez.Reason.*`, 5.83 and later).
    static func reason(_ name: String, _ message: String) -> DisconnectReason {
        switch name {
        case "org.bluez.Reason.Timeout": return .supervisionTimeout
        case "org.bluez.Reason.Local": return .localTerminated
        case "org.bluez.Reason.Remote": return .remoteTerminated
        default: return .other(message.isEmpty ? name : "\(message) (\(name))")
        }
    }
}
