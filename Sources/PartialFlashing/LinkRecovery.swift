import Transport

/// The bounded reconnection policy the partial-flashing flows share.
///
/// A link loss the flow asked for (a reboot after `FF 00` or END_OF_TRANSMISSION)
/// is expected and free (a loss after `FF 00` only once the next connection shows the board
/// restarted: `lateCount(_:)` otherwise), and is followed by a connection attempt after `rebootReconnectDelay`
/// (none by default); any other loss counts against `reconnectLimit`. Each loss gets
/// `reconnectAttempts` connection attempts, `reconnectDelay` apart.
struct LinkRecovery: Sendable, Equatable {
    let settings: PartialFlashSettings
    /// Unexpected link losses so far.
    private(set) var losses = 0
    /// Connection attempts made for the current loss.
    private(set) var attempts = 0
    private(set) var lastLoss: DisconnectReason?

    init(settings: PartialFlashSettings) { self.settings = settings }

    /// The board rebooted as asked: connect again at once (the attempt waits for its advertising).
    mutating func expectedLoss() -> [FlowAction] {
        attempts = 1
        return [.connect(after: settings.rebootReconnectDelay)]
    }

    /// The link dropped by surprise: connect again, unless that happened too often.
    mutating func unexpectedLoss(_ reason: DisconnectReason) -> Result<[FlowAction], PartialFlashError> {
        losses += 1
        lastLoss = reason
        guard losses <= settings.reconnectLimit else {
            return .failure(.tooManyLinkLosses(count: losses, last: reason))
        }
        attempts = 1
        return .success([
            PartialFlashWriter.report(.linkDropped(reason)),
            .connect(after: settings.reconnectDelay)
        ])
    }

    /// A loss first taken for the restart the flow asked for turned out, on the next connection,
    /// not to be it (`PartialFlashWriter` after the fence): it counts as `unexpectedLoss` would
    /// have, and the connection it led to is already made.
    mutating func lateCount(_ reason: DisconnectReason) -> Result<[FlowAction], PartialFlashError> {
        losses += 1
        lastLoss = reason
        guard losses <= settings.reconnectLimit else {
            return .failure(.tooManyLinkLosses(count: losses, last: reason))
        }
        return .success([PartialFlashWriter.report(.droppedBeforeRestart(reason))])
    }

    /// A connection attempt failed: try again, or give up.
    mutating func connectFailed(_ error: TransportError) -> Result<[FlowAction], PartialFlashError> {
        guard attempts < settings.reconnectAttempts else {
            return .failure(.reconnectFailed(attempts: attempts, lastError: error))
        }
        attempts += 1
        return .success([
            PartialFlashWriter.said(.connectFailed(error, attempt: attempts, of: settings.reconnectAttempts)),
            .connect(after: settings.reconnectDelay)
        ])
    }

    mutating func connected() { attempts = 0 }
}
