import Diagnostics

/// Why a link dropped.
public enum DisconnectReason: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The board ended the connection (for example when it resets).
    case remoteTerminated
    /// This host ended the connection.
    case localTerminated
    /// No packet arrived within the supervision timeout.
    case supervisionTimeout
    /// Anything else the stack reported, in its words.
    case other(String)

    public var description: String {
        switch self {
        case .remoteTerminated: return "the board closed the connection"
        case .localTerminated: return "this computer closed the connection"
        case .supervisionTimeout: return "the link timed out (board out of range or reset)"
        case .other(let s): return s
        }
    }
}

/// The one error type of the transport layer. Each case names the operation.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    case timeout(operation: String, after: Duration)
    case disconnected(operation: String, reason: DisconnectReason)
    case serviceNotFound(BLEUUID)
    case characteristicNotFound(GATTCharacteristic)
    case connectFailed(String)
    case notConnected(operation: String)
    case cancelled(operation: String)
    /// The stack refused or failed the operation, in its own words.
    case failed(operation: String, message: String)

    public var description: String {
        switch self {
        case let .timeout(op, after): return "\(op) timed out after \(after.readableText)"
        case let .disconnected(op, reason): return "\(op) failed: \(reason)"
        case let .serviceNotFound(uuid): return "the board does not offer service \(uuid)"
        case let .characteristicNotFound(c): return "the board does not offer characteristic \(c)"
        case let .connectFailed(msg): return "could not connect: \(msg)"
        case let .notConnected(op): return "\(op) needs a connection, and there is none"
        case let .cancelled(op): return "\(op) was cancelled"
        case let .failed(op, msg): return "\(op) failed: \(msg)"
        }
    }
}

extension TransportError: DomainError {
    /// The board could not be reached or kept: not found, out of range or not connectable.
    public var failureKind: FailureKind { .boardUnavailable }
}
