import DBus
import Diagnostics
import Transport

/// Everything that can go wrong talking to BlueZ, each with what to do about it.
public enum BlueZError: Error, Sendable, Equatable {
    /// bluetoothd is not on the system bus (or the bus itself cannot be reached).
    case bluetoothUnavailable(String)
    /// No adapter by that name, or none at all.
    case noAdapter(requested: String?, available: [String])
    /// The adapter exists but is switched off.
    case adapterOff(String)
    /// No device matched the address or name during the scan.
    case deviceNotFound(query: String, seen: [String])
    /// More than one device matched a name.
    case ambiguousDevice(query: String, matches: [String])
    /// Connect failed even after the retries BlueZ needs.
    case connectFailed(device: String, message: String)
    /// Connected, but BlueZ never reported the GATT services as resolved.
    case servicesNeverResolved(device: String, after: Duration)
    /// The board (or the user) refused to pair.
    case pairingRefused(device: String, message: String)
    /// The link dropped during an operation.
    case disconnected(operation: String, reason: DisconnectReason)
    /// An operation needs a connection and there is none.
    case notConnected(operation: String)
    /// An operation took longer than allowed.
    case timeout(operation: String, after: Duration)
    /// BlueZ answered with an error reply, or the call failed on the bus.
    case failed(operation: String, message: String)
    /// BlueZ answered with something of the wrong shape (type, size, missing fields).
    case unexpectedReply(operation: String, detail: String)

    /// The error as the transport protocol reports it.
    public var transportError: TransportError {
        switch self {
        case let .disconnected(op, reason): return .disconnected(operation: op, reason: reason)
        case let .notConnected(op): return .notConnected(operation: op)
        case let .timeout(op, after): return .timeout(operation: op, after: after)
        case .connectFailed, .servicesNeverResolved, .pairingRefused, .deviceNotFound, .ambiguousDevice,
            .bluetoothUnavailable, .noAdapter, .adapterOff:
            return .connectFailed(description)
        case let .failed(op, _), let .unexpectedReply(op, _):
            return .failed(operation: op, message: description)
        }
    }
}

extension BlueZError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .bluetoothUnavailable(let why):
            return
                "Bluetooth is not available: \(why); start it (`sudo systemctl start bluetooth`) and check `bluetoothctl show`"
        case let .noAdapter(requested?, available):
            return
                "no Bluetooth adapter \(requested); adapters: \(available.isEmpty ? "none" : available.joined(separator: ", "))"
        case .noAdapter(nil, _):
            return "no Bluetooth adapter found; plug one in or check `bluetoothctl list`"
        case .adapterOff(let name):
            return "Bluetooth adapter \(name) is switched off; switch it on with `bluetoothctl power on`"
        case let .deviceNotFound(query, seen):
            let shown = seen.prefix(8).joined(separator: ", ") + (seen.count > 8 ? " and \(seen.count - 8) more" : "")
            let list = seen.isEmpty ? "no board was seen" : "seen: \(shown)"
            return "no board '\(query)' in range (\(list)); check it is powered, close to this computer and "
                + "not connected elsewhere, or put it in pairing mode (hold A+B, press reset)"
        case let .ambiguousDevice(query, matches):
            let shown =
                matches.prefix(8).joined(separator: ", ") + (matches.count > 8 ? " and \(matches.count - 8) more" : "")
            return "'\(query)' matches several boards (\(shown)); give the address instead"
        case let .connectFailed(device, message):
            return "could not connect to \(device): \(message); move the board closer, reset it and try again"
        case let .servicesNeverResolved(device, after):
            return "\(device) connected but its services never resolved within \(after.seconds.formatted1)s; "
                + "reset the board and try again; if it keeps happening, the board may have forgotten this computer: "
                + "run `bitflash forget \(Self.address(in: device))` and put the board in pairing mode (hold A+B, press reset)"
        case let .pairingRefused(device, message):
            return "pairing refused by \(device) (\(message)); put the board in pairing mode (hold A+B, press reset), "
                + "or, if it was paired with this computer before, run `bitflash forget \(Self.address(in: device))` and try again"
        case let .disconnected(op, reason):
            return "\(op) failed: the board disconnected (\(reason))"
        case let .notConnected(op):
            return "\(op) needs a connection to the board, and there is none"
        case let .timeout(op, after):
            return "\(op) got no answer within \(after.seconds.formatted1)s; the board may be out of range"
        case let .failed(op, message):
            return "\(op) failed: \(message)"
        case let .unexpectedReply(op, detail):
            return
                "\(op): BlueZ sent an unexpected reply (\(detail)). This is not a radio problem, and running again does not help: "
                + "check the BlueZ version (5.56 or later is needed) and other Bluetooth software on this computer"
        }
    }
}

extension BlueZError {
    /// The address in a device label `Name (AA:BB:…)`, or the label itself.
    static func address(in label: String) -> String {
        guard label.hasSuffix(")"), let open = label.lastIndex(of: "(") else { return label }
        return String(label[label.index(after: open)..<label.index(before: label.endIndex)])
    }
}

extension Duration {
    /// Whole and fractional seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

extension Double {
    /// One decimal, e.g. `2.5`.
    var formatted1: String {
        let tenths = (self * 10).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int(tenths / 10)) : String(tenths / 10)
    }
}

extension BlueZError: DomainError {
    /// The kind of each failure (docs/json-and-exit-codes.md maps kinds to exit codes).
    public var failureKind: FailureKind {
        switch self {
        case .bluetoothUnavailable, .noAdapter, .adapterOff: return .bluetoothUnavailable
        case .deviceNotFound, .connectFailed, .ambiguousDevice: return .boardUnavailable
        case .servicesNeverResolved, .unexpectedReply: return .servicesNotResolved
        case .pairingRefused: return .pairingRefused
        case .disconnected, .notConnected, .timeout, .failed: return .flashFailed
        }
    }
}
