import DBus

extension BlueZError {
    /// Maps a D-Bus failure of `operation` to what it means for the user. `onService`: the
    /// call was on bluetoothd itself (its object tree, an adapter), not on a device, so silence
    /// means bluetoothd is hung, not that a board is out of range.
    ///
    /// BlueZ overloads `org.bluez.Error.Failed`, so its message is looked at too
    /// (`src/error.h`: `le-connection-abort-by-local`, "Not connected", ATT errors).
    public static func from(_ error: DBusError, operation: String, onService: Bool = false) -> BlueZError {
        switch error {
        case let .remote(name, message):
            if onService, name == DBusErrorName.noReply.rawValue {
                return .bluetoothUnavailable(
                    "bluetoothd did not answer \(operation) (\(message)); it may be hung: "
                        + "restart it (`sudo systemctl restart bluetooth`)")
            }
            return fromReply(name: name, message: message, operation: operation)
        case let .timeout(_, after) where onService:
            return .bluetoothUnavailable(
                "bluetoothd did not answer \(operation) within \(after.seconds.formatted1) s; it may be hung: "
                    + "restart it (`sudo systemctl restart bluetooth`)")
        case let .timeout(_, after):
            return .timeout(operation: operation, after: after)
        case .disconnected:
            return .bluetoothUnavailable("the connection to the system bus was lost")
        case .connectionFailed, .noAddress, .libraryUnavailable:
            return .bluetoothUnavailable(error.description)
        case .typeMismatch, .missingArgument:
            return .unexpectedReply(operation: operation, detail: error.description)
        default:
            return .failed(operation: operation, message: error.description)
        }
    }

    static func fromReply(name: String, message: String, operation: String) -> BlueZError {
        let short = name.hasPrefix(BlueZNames.errorPrefix) ? String(name.dropFirst(BlueZNames.errorPrefix.count)) : name
        switch short {
        case "NotConnected":
            return .notConnected(operation: operation)
        case "Failed" where message.lowercased() == "not connected":
            return .notConnected(operation: operation)
        case "NotReady":
            return .bluetoothUnavailable("the adapter is not ready (switched off?): \(message)")
        case "AuthenticationFailed", "AuthenticationRejected", "AuthenticationCanceled", "AuthenticationTimeout":
            return .pairingRefused(device: operation, message: "\(short): \(message)")
        case "InProgress":
            return .failed(
                operation: operation,
                message: "another Bluetooth operation is still in progress (\(message)); wait a moment and try again")
        case "NotAuthorized", "NotPermitted":
            return .failed(
                operation: operation, message: "the board refused it (\(short): \(message)); it may need pairing")
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return .bluetoothUnavailable("bluetoothd is not running (no org.bluez on the system bus)")
        case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod":
            return .failed(operation: operation, message: "BlueZ no longer knows this object (\(message)); scan again")
        case "org.freedesktop.DBus.Error.AccessDenied":
            return .bluetoothUnavailable(
                "the system bus denied access to BlueZ (\(message)); run as a user in the `bluetooth` group")
        default:
            return .failed(operation: operation, message: message.isEmpty ? name : "\(short): \(message)")
        }
    }

    /// True for the connect failures BlueZ asks the client to retry (bleak does the same).
    static func isRetryableConnect(_ error: DBusError) -> Bool {
        guard case let .remote(name, message) = error else { return false }
        if name == DBusErrorName.bluezInProgress.rawValue { return true }
        guard name == DBusErrorName.bluezFailed.rawValue else { return false }
        let m = message.lowercased()
        return m.contains("le-connection-abort-by-local") || m.contains("software caused connection abort")
            || m.contains("connection-abort")
    }

    /// True when a GATT operation failed because the link is not encrypted or bonded.
    static func needsPairing(_ error: DBusError) -> Bool {
        guard case let .remote(name, message) = error else { return false }
        let m = message.lowercased()
        if name == "org.bluez.Error.NotAuthorized" { return true }
        if name == "org.bluez.Error.NotPermitted", m.contains("auth") || m.contains("paired") || m.contains("encrypt") {
            return true
        }
        return m.contains("insufficient authentication") || m.contains("insufficient encryption")
    }
}
