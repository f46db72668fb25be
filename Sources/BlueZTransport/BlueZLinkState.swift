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
    /// The loss that ended the last link, while no new one is up: a flow that starts listening
    /// for losses after it (between two phases) is told at once (`BlueZDeviceTransport.disconnects()`).
    var lastLoss: DisconnectReason?
    /// Set by `disconnect()`, so the loss that follows counts as local.
    var closingLocally = false
    /// The reason of BlueZ's `Disconnected` signal, consumed by the `Connected=false` after it.
    var pendingReason: DisconnectReason?
    /// Notification values dropped because they could not be a real ATT value.
    var droppedNotifications = 0
    /// Notification values passed on.
    var deliveredNotifications = 0
    /// The first value BlueZ passed on that it never sends (of the wrong type or size), in words.
    var violation: String?
    /// Set when a `ServicesResolved` of the wrong type arrived: the wait for the services asks
    /// BlueZ for the property itself, and its reply decides.
    var malformedServicesResolved = false
    /// How many times BlueZ announced the device's `ServicesResolved` (a `PropertiesChanged` that
    /// names it, the device object appearing or going). A read of the property whose reply came
    /// before the latest of these is older than the state: see `read(servicesResolved:askedAt:)`.
    var servicesResolvedNews = 0

    /// What an event means for the transport.
    enum Effect: Equatable {
        case linkLost(DisconnectReason)
        case notification(GATTCharacteristic, [UInt8])
    }

    mutating func apply(_ event: BlueZEvent) -> [Effect] {
        switch event {
        case let .propertiesChanged(path, interface, changed, invalidated):
            if path == devicePath, interface == BlueZNames.device {
                // A link loss sent as something else than a boolean would go unnoticed.
                if let v = changed["Connected"]?.unwrapped, v.signature != "b" {
                    note("Connected of type '\(v.signature)' instead of a boolean")
                }
                if let v = changed["ServicesResolved"]?.unwrapped, v.signature != "b" {
                    malformedServicesResolved = true
                }
                if changed["ServicesResolved"] != nil || invalidated.contains("ServicesResolved") {
                    servicesResolvedNews += 1
                }
                device?.apply(changed: changed, invalidated: invalidated)
                if case .bool(false)? = changed["Connected"] { return loseLink() }
                return []
            }
            guard interface == BlueZNames.gattCharacteristic,
                let key = gatt.characteristics.first(where: { $0.value == path })?.key
            else { return [] }
            guard let value = changed["Value"] else {
                // BlueZ sends a notification as the new Value; never by invalidating it.
                if invalidated.contains("Value") {
                    droppedNotifications += 1
                    note("a notification without its value (Value invalidated)")
                }
                return []
            }
            guard let bytes = try? value.bytes(), bytes.count <= BlueZLimits.maximumValueLength else {
                droppedNotifications += 1
                let v = value.unwrapped
                note(
                    v.signature != "ay"
                        ? "a notification that cannot come from a board (of type '\(v.signature)' instead of bytes)"
                        : "a notification that cannot come from a board (\((try? v.bytes().count) ?? 0) bytes, more than an attribute holds: 512)"
                )
                return []
            }
            deliveredNotifications += 1
            return [.notification(key, bytes)]
        case let .interfacesAdded(path, interfaces):
            if path == devicePath, let p = interfaces[BlueZNames.device] {
                device = BlueZDevice(path: path, properties: p)
                servicesResolvedNews += 1
            } else if path.hasPrefix(devicePath + "/") {
                gattDirty = true
            }
            return []
        case let .interfacesRemoved(path, interfaces):
            if path == devicePath, interfaces.contains(BlueZNames.device) {
                device = nil
                servicesResolvedNews += 1
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

    /// The reply to a read of `ServicesResolved` asked when `servicesResolvedNews` was `asked`.
    ///
    /// BlueZ answers the read and signals a change in the order they happen, but the reply wakes
    /// the reader while the signal travels through the signal streams: the two are applied in
    /// either order. A signal applied since the read was asked is as new as the reply or newer
    /// (signals are applied in the order sent), so the reply then changes nothing; taking it
    /// would put back a `false` that BlueZ has since changed, and the wait for the services
    /// would wait for a signal already handled.
    mutating func read(servicesResolved value: Bool, askedAt asked: Int) {
        guard servicesResolvedNews == asked else { return }
        device?.servicesResolved = value
    }

    /// A new link is up: no loss is outstanding.
    mutating func linkEstablished() {
        linkUp = true
        lastLoss = nil
    }

    /// The link is taken down without a signal from BlueZ (its `Disconnect` was not confirmed
    /// in time): the loss to announce, nil when the link was down already.
    mutating func forceDown() -> DisconnectReason? {
        guard linkUp else { return nil }
        linkUp = false
        pendingReason = nil
        lastLoss = .localTerminated
        return .localTerminated
    }

    /// Keeps the first violation.
    mutating func note(_ what: String) {
        if violation == nil { violation = what }
    }

    private mutating func loseLink() -> [Effect] {
        guard linkUp else { return [] }
        linkUp = false
        let reason = pendingReason ?? (closingLocally ? .localTerminated : .remoteTerminated)
        pendingReason = nil
        lastLoss = reason
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
