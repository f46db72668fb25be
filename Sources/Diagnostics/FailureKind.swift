/// What went wrong, in the domain's terms: the kind every library error reports. The library
/// never speaks of process exit statuses; the command line alone maps a kind to one (its
/// `ExitStatus(kind)` table), and library users switch on the kind.
public enum FailureKind: String, Sendable, Equatable, CaseIterable, Codable {
    /// A request that cannot be honoured as asked: a value out of range, options that contradict
    /// each other, a board named that is not the one the file is for.
    case invalidRequest = "invalid-request"
    /// A firmware file that is malformed, or has no image for this board, or is for another board.
    case badFirmware = "bad-firmware"
    /// A file that is not firmware and is malformed: a trace line, a record.
    case malformedData = "malformed-data"
    /// A file could not be read (missing, not permitted, a directory).
    case unreadable
    /// A file could not be written (the previous one is left as it was).
    case unwritable
    /// No such board: not found, out of range, not connectable, or no room on the adapter.
    case boardUnavailable = "board-unavailable"
    /// The flash itself failed; the message says what to do.
    case flashFailed = "flash-failed"
    /// Bluetooth cannot be used: bluetoothd not running, no adapter, or the adapter is off.
    case bluetoothUnavailable = "bluetooth-unavailable"
    /// Something needed is held for now by another program: a port, a state folder.
    case heldElsewhere = "held-elsewhere"
    /// The board connected but BlueZ never resolved its services.
    case servicesNotResolved = "services-not-resolved"
    /// The Bluetooth stack sent what its protocol never allows (a software problem, not a radio one).
    case stackViolation = "stack-violation"
    /// The board refused to pair.
    case pairingRefused = "pairing-refused"
    /// A bug in bitflash.
    case internalFault = "internal-fault"
}

/// An error that says what kind of failure it is. Every layer's error type conforms, so that a
/// front door (the command line, a library user) needs no table of error types.
public protocol DomainError: Error {
    /// What kind of failure this error is.
    var failureKind: FailureKind { get }
}

extension FailureKind {
    /// The kind of `error`: its own, else `fallback` (an error that does not say is a failed flash).
    public static func of(_ error: any Error, otherwise fallback: FailureKind = .flashFailed) -> FailureKind {
        (error as? any DomainError)?.failureKind ?? fallback
    }
}
