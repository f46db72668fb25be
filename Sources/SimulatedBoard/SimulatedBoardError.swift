import Diagnostics
import Foundation
import Transport

/// The one error type of the simulated board and the simulation.
public enum SimulatedBoardError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// A flash address outside the chip.
    case addressOutOfRange(address: UInt32, count: Int, flashSize: UInt32)
    /// A word write at an address that is not a multiple of 4.
    case unalignedWrite(address: UInt32)
    /// A saved board file that cannot be read back.
    case badStateFile(String)
    /// The firmware image holds data outside the board's flash.
    case imageOutsideFlash(address: UInt32)
    /// No board with this id in the simulation.
    case unknownBoard(Int)
    /// Two flows were given the same board.
    case boardBusy(Int)
    /// The board did not accept the run's first connection.
    case notConnectable(board: String, reason: String)
    /// The flow did not finish before the deadline.
    case deadlineExceeded(Duration)
    /// The flow finished without setting its outcome.
    case noOutcome
    /// The flow waits for something that cannot happen (no timer, no link activity).
    case flowStalled
    /// A Nordic bootloader operation on a board whose profile has none.
    case noNordicBootloader(String)

    public var description: String {
        switch self {
        case let .noNordicBootloader(board):
            return
                "this simulated \(board) has no Nordic bootloader (an MCUboot profile): use a stock profile such as microbit-v2"

        case let .addressOutOfRange(a, n, size):
            return
                "flash access of \(n) bytes at \(Hex.number(a, uppercase: false)) is outside the board's \(Hex.number(size, uppercase: false)) bytes of flash"
        case let .unalignedWrite(a):
            return "flash word write at \(Hex.number(a, uppercase: false)) is not 4-byte aligned (the chip would fault)"
        case let .badStateFile(why):
            return "the saved simulated board cannot be read: \(why)"
        case let .imageOutsideFlash(a):
            return
                "the firmware image holds data at \(Hex.number(a, uppercase: false)), outside the board's flash: pick the image for this board"
        case let .unknownBoard(id):
            return "no simulated board #\(id): add the board to the simulation first"
        case let .boardBusy(id):
            return "simulated board #\(id) was given to two flows at once: a board accepts one connection"
        case let .notConnectable(board, reason):
            return "could not connect to the simulated \(board): \(reason)"
        case let .deadlineExceeded(d):
            return
                "the flow did not finish within \(d.secondsText) of modelled time: raise the deadline or check the trace"
        case .noOutcome:
            return "the flow finished without a result (a bug in the flow)"
        case .flowStalled:
            return
                "the flow stopped: it waits for an event that cannot come (no timer running, nothing on the link). Check the trace"
        }
    }

    public var errorDescription: String? { description }
}

extension SimulatedBoardError: DomainError {
    /// A board unavailable for a board that would not take the run's first connection (as a real
    /// board that cannot be connected: nothing was sent); a failed flash otherwise.
    public var failureKind: FailureKind {
        if case .notConnectable = self { return .boardUnavailable }
        return .flashFailed
    }
}
