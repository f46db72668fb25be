import Diagnostics

/// A transport whose stack can pass on what no board and no link can produce (BlueZ over D-Bus
/// sending a value of the wrong type or size). The transport drops such values; a run that
/// meets one ends with it (`StackViolation`), instead of waiting for answers that were dropped
/// and ending, much later, with the advice for a weak radio link.
public protocol StackIntegrityReporting: BLETransport {
    /// The first value the stack passed on that cannot be real, in words; nil while there is none.
    var stackViolation: String? { get }
    /// Yields `stackViolation` once, when it is first set (at once when it already is).
    func stackViolations() -> AsyncStream<String>
}

/// The stack below the transport sent something its protocol never allows: a software problem
/// on this computer, not a radio one; running again does not help.
public struct StackViolation: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was sent, e.g. "a notification of 4096 bytes, more than an attribute holds (512)".
    public let detail: String
    /// The stack, e.g. "BlueZ".
    public let stack: String

    public init(_ detail: String, stack: String = "BlueZ") {
        self.detail = detail
        self.stack = stack
    }

    public var description: String {
        "\(stack) sent something unexpected: \(detail). This is not a radio problem, and running again does not help: "
            + "check the \(stack) version and other Bluetooth software on this computer"
    }
}

extension StackViolation: DomainError, TransienceReporting {
    /// 76 (EX_PROTOCOL): the stack broke its side of the protocol.
    public var failureKind: FailureKind { .stackViolation }
    public var isTransient: Bool { false }
}
