import Diagnostics
import Foundation

/// Everything that can go wrong in the D-Bus layer.
///
/// Error replies from a peer arrive as ``remote(name:message:)``; build one with
/// ``init(name:message:)`` (for instance to answer a method call with `org.bluez.Error.InProgress`).
public enum DBusError: Error, Sendable, Equatable {
    /// The peer answered with a D-Bus error reply.
    case remote(name: String, message: String)
    /// No reply arrived in time.
    case timeout(method: String, after: Duration)
    /// The bus could not be reached or refused the connection.
    case connectionFailed(address: String, reason: String)
    /// No bus address is known (an environment variable is unset).
    case noAddress(String)
    /// The connection is closed or the bus went away.
    case disconnected
    /// A name, path, signature or value cannot be sent as given.
    case invalidArgument(String)
    /// A received value does not have the type the caller expected.
    case typeMismatch(expected: String, actual: String, context: String)
    /// A received message has fewer arguments than the caller expected.
    case missingArgument(index: Int, context: String)
    /// The bus did not give us the well-known name we asked for.
    case nameNotAcquired(name: String, reply: UInt32)
    /// libdbus could not allocate memory.
    case outOfMemory
    /// libdbus cannot be loaded (not installed, or lacking a function); the reason is the loader's.
    case libraryUnavailable(String)

    /// An error reply with the given D-Bus error name and human-readable message.
    public init(name: String, message: String) {
        self = .remote(name: name, message: message)
    }

    /// The D-Bus error name, for ``remote(name:message:)``; `nil` otherwise.
    public var name: String? {
        if case .remote(let name, _) = self { return name }
        return nil
    }

    /// True when this is an error reply called `name`.
    public func hasName(_ name: DBusErrorName) -> Bool {
        self.name == name.rawValue
    }

    /// The error name and message to send back when a handler throws this error.
    var replyNameAndMessage: (String, String) {
        switch self {
        case .remote(let name, let message): return (name, message)
        case .invalidArgument, .typeMismatch, .missingArgument:
            return (DBusErrorName.invalidArgs.rawValue, description)
        default: return (DBusErrorName.failed.rawValue, description)
        }
    }
}

extension DBusError: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case .remote(let name, let message):
            return "\(name): \(message)"
        case .timeout(let method, let after):
            return
                "D-Bus call \(method) got no reply within \(after); the service may be busy or hung, try again or raise the timeout"
        case .connectionFailed(let address, let reason):
            return
                "cannot connect to the D-Bus bus at \(address): \(reason); check that the bus is running and the address is right"
        case .noAddress(let variable):
            return "no D-Bus address: \(variable) is not set; start a bus or set the variable"
        case .disconnected:
            return "the D-Bus connection is closed; reconnect and try again"
        case .invalidArgument(let what):
            return "cannot send over D-Bus: \(what)"
        case .typeMismatch(let expected, let actual, let context):
            return
                "unexpected D-Bus reply in \(context): expected type '\(expected)' but got '\(actual)'; the service speaks a different interface version"
        case .missingArgument(let index, let context):
            return "unexpected D-Bus reply in \(context): argument \(index) is missing"
        case .nameNotAcquired(let name, let reply):
            return
                "could not own the D-Bus name \(name) (RequestName reply \(reply)); another process owns it or the bus policy forbids it"
        case .outOfMemory:
            return "libdbus ran out of memory"
        case .libraryUnavailable(let reason):
            return
                "libdbus-1 is not installed or cannot be loaded (\(reason)); install it: sudo apt-get install libdbus-1-3"
        }
    }

    public var errorDescription: String? { description }
}

/// A D-Bus error name, with the ones this project meets as constants.
public struct DBusErrorName: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public static let failed: DBusErrorName = "org.freedesktop.DBus.Error.Failed"
    public static let noReply: DBusErrorName = "org.freedesktop.DBus.Error.NoReply"
    public static let serviceUnknown: DBusErrorName = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let unknownObject: DBusErrorName = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterface: DBusErrorName = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownMethod: DBusErrorName = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownProperty: DBusErrorName = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnly: DBusErrorName = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let invalidArgs: DBusErrorName = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let nameHasNoOwner: DBusErrorName = "org.freedesktop.DBus.Error.NameHasNoOwner"

    /// BlueZ errors (`src/error.c`).
    public static let bluezInProgress: DBusErrorName = "org.bluez.Error.InProgress"
    public static let bluezFailed: DBusErrorName = "org.bluez.Error.Failed"
    public static let bluezNotConnected: DBusErrorName = "org.bluez.Error.NotConnected"
    public static let bluezNotReady: DBusErrorName = "org.bluez.Error.NotReady"
    public static let bluezNotPermitted: DBusErrorName = "org.bluez.Error.NotPermitted"
    public static let bluezNotSupported: DBusErrorName = "org.bluez.Error.NotSupported"
    public static let bluezInvalidArguments: DBusErrorName = "org.bluez.Error.InvalidArguments"
    public static let bluezAlreadyConnected: DBusErrorName = "org.bluez.Error.AlreadyConnected"
    public static let bluezDoesNotExist: DBusErrorName = "org.bluez.Error.DoesNotExist"
}

extension DBusError: DomainError {
    /// A missing libdbus is what a missing bluetoothd is: Bluetooth cannot be used (exit 75).
    public var failureKind: FailureKind {
        if case .libraryUnavailable = self { return .bluetoothUnavailable }
        return .flashFailed
    }
}
