import Diagnostics
import FirmwareImage

/// Why a real board could not be flashed before its session started, or why its flash stopped.
public enum BoardFlashError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The board offers none of partial flashing, McuMgr and Nordic DFU.
    case noFlashingService(board: String)
    /// The flash was cancelled; the board keeps what it received.
    case cancelled(resumable: Bool)
    /// The adapter refused the board's connection the way a controller out of connections does,
    /// after the board backed off as often as it may (or with no other board to wait for).
    case adapterFull(adapter: String, message: String)
    /// Two queries of one class reached the same board: it is flashed once, by the first.
    case sameBoard(address: String, flashedAs: String)

    /// What went wrong and what to do, in one sentence.
    public var description: String {
        switch self {
        case let .noFlashingService(board):
            return "\(board) offers neither partial flashing, nor McuMgr, nor Nordic DFU; "
                + "reset it into pairing mode (hold A+B, press reset) and try again"
        case let .cancelled(resumable):
            return "the flash was cancelled; the board keeps what it received"
                + (resumable ? ": flash the same file again to continue where it stopped" : ": flash the file again")
        case let .sameBoard(address, other):
            return "this is the board \(address), which --device \(other) already names: each board is flashed "
                + "once; name it once"
        case let .adapterFull(adapter, message):
            return "\(adapter) refused the connection (\(message)), as a controller with no connection left does; "
                + "flash fewer boards at once (--max-connections), add another adapter (--adapter), or "
                + "disconnect other devices from this one, then flash again with --retry-failed"
        }
    }
}

extension BoardFlashError: DomainError {
    /// A board unavailable (as a connect that failed) for an adapter out of connections, and for
    /// a board that offers no way to flash it (as one whose program keeps Bluetooth off: not
    /// connectable for a flash until it is reset into pairing mode); a failed flash otherwise.
    public var failureKind: FailureKind {
        switch self {
        case .cancelled: return .flashFailed
        case .adapterFull, .noFlashingService: return .boardUnavailable
        case .sameBoard: return .invalidRequest
        }
    }
}
