import Diagnostics
import PartialFlashingFrames
import Transport

/// Resets a board with `FF 01` and waits until it is back and connected again.
///
/// For a board whose flash work may hang: a block whose answer never came can be a flash
/// operation that never ends (`NRF_EVT_FLASH_OPERATION_ERROR`, or a write the SoftDevice
/// refuses), on which CODAL and DAL wait for ever in the event fiber (codal-microbit-v2
/// `source/MicroBitFlash.cpp` `erase_page`, `flash_burn`). Such a board starves every other
/// fiber: its pairing-mode timeout never fires, and a buttonless DFU only disconnects it and
/// stops its advertising (the shutdown waits for `MicroBitBLEManager::idleCallback`), leaving it
/// unreachable until a power cycle. `FF 01` is different: the write handler calls
/// `microbit_reset()` at once, from the SoftDevice's interrupt (`MicroBitPartialFlashingService.cpp`
/// `onDataWritten`, `MICROBIT_RESET`), so it resets a hung board as well as a healthy one.
///
/// 1. Without a link, connect first (at most `reconnectAttempts`).
/// 2. Write `FF 01` and wait for the link to drop (closing it after `rebootTimeout`).
/// 3. Connect again within `restartWindow`, at most `reconnectAttempts` times. The board comes
///    back in pairing mode when the interrupted write had marked `flashIncomplete`.
/// The outcome is the new link's `ConnectionInfo`.
public struct BoardReset: FlowMachine {
    public typealias Output = ConnectionInfo
    public typealias Report = PartialFlashReport
    public private(set) var outcome: Result<ConnectionInfo, any Error>?

    private enum State: Sendable {
        case idle, connectingFirst(attempts: Int), awaitingDrop, closingLink
        case reconnecting(attempts: Int, windowEnds: Duration), finished
    }

    private let settings: PartialFlashSettings
    private var state = State.idle
    private var lastError: TransportError?

    public init(settings: PartialFlashSettings = PartialFlashSettings()) { self.settings = settings }

    /// Starts: `FF 01` at once on a live link, else a connection first.
    public mutating func begin(linkUp: Bool, now: Duration) -> [FlowAction] {
        guard case .idle = state else { return [] }
        guard linkUp else {
            state = .connectingFirst(attempts: 1)
            return [.connect(after: .zero, to: .application)]
        }
        return reset()
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard outcome == nil else { return [] }
        switch (state, event) {
        case (.idle, .start), (.idle, .connected):
            return reset()
        case (.connectingFirst, .connected):
            return reset()
        case let (.connectingFirst(attempts), .connectFailed(error)):
            lastError = error
            guard attempts < settings.reconnectAttempts else { return fail(.unreachable(error)) }
            state = .connectingFirst(attempts: attempts + 1)
            return [.connect(after: settings.reconnectDelay, to: .application)]
        case (.awaitingDrop, .disconnected(let reason)), (.closingLink, .disconnected(let reason)):
            state = .reconnecting(attempts: 1, windowEnds: now + settings.restartWindow)
            return [
                .cancelTimer(PartialFlashTimer.reboot), Self.report(.boardResets(reason)),
                .startTimer(PartialFlashTimer.restartWindow, settings.restartWindow),
                .connect(after: settings.rebootReconnectDelay, to: .application)
            ]
        case (.awaitingDrop, .timerFired(PartialFlashTimer.reboot)):
            state = .closingLink
            return [
                Self.report(.noDisconnectAfterReset(waited: settings.rebootTimeout)),
                .disconnect, .startTimer(PartialFlashTimer.reboot, settings.rebootTimeout)
            ]
        case (.closingLink, .timerFired(PartialFlashTimer.reboot)):
            return fail(.noDisconnect(settings.rebootTimeout))
        case (.reconnecting, .connected(let info)):
            outcome = .success(info)
            state = .finished
            return [
                .cancelTimer(PartialFlashTimer.restartWindow),
                Self.report(.backAfterReset), .finish
            ]
        case let (.reconnecting(attempts, windowEnds), .connectFailed(error)):
            lastError = error
            guard attempts < settings.reconnectAttempts, now + settings.reconnectDelay < windowEnds else {
                return fail(.notBack(settings.restartWindow, lastError: error))
            }
            state = .reconnecting(attempts: attempts + 1, windowEnds: windowEnds)
            return [.connect(after: settings.reconnectDelay, to: .application)]
        case (.reconnecting, .timerFired(PartialFlashTimer.restartWindow)):
            return fail(.notBack(settings.restartWindow, lastError: lastError))
        default:
            return []
        }
    }

    private mutating func reset() -> [FlowAction] {
        state = .awaitingDrop
        let bytes = PartialFlashingRequest.reset(.application).bytes
        return [
            Self.report(.resettingHungBoard),
            Self.report(.sent(bytes)),
            .write(PartialFlashingGATT.characteristic, bytes, .command),
            .startTimer(PartialFlashTimer.reboot, settings.rebootTimeout)
        ]
    }

    private mutating func fail(_ error: BoardResetError) -> [FlowAction] {
        outcome = .failure(error)
        state = .finished
        return [.cancelTimer(PartialFlashTimer.reboot), .cancelTimer(PartialFlashTimer.restartWindow), .finish]
    }
}

/// The board could not be reset with `FF 01` and reached again.
public enum BoardResetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection for the reset.
    case unreachable(TransportError)
    /// The link did not drop after `FF 01`, nor when closed.
    case noDisconnect(Duration)
    /// The board did not accept a connection within the window after its reset.
    case notBack(Duration, lastError: TransportError?)

    public var description: String {
        switch self {
        case let .unreachable(error):
            return "the board could not be reached to reset it (\(error))"
        case let .noDisconnect(d):
            return "the link did not drop within \(d.shortText) of the reset (FF 01), nor when closed"
        case let .notBack(d, last):
            return "the board did not accept a connection within \(d.shortText) of its reset (FF 01)"
                + (last.map { " (last attempt: \($0))" } ?? "")
        }
    }
}
