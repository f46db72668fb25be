import Diagnostics
import PartialFlashingFrames
import Transport

/// What is wrong with a region a board reported.
public enum RegionProblem: Sendable, Equatable, CustomStringConvertible {
    /// The region starts at address 0 but is not empty.
    case zeroStart
    /// The end lies before (or at) the start.
    case endBeforeStart
    /// The region reaches beyond the board's flash (`flash` is the flash range).
    case outsideFlash(Range<UInt32>)
    /// The region lies outside the application area of the board's layout.
    case outsideApplication(Range<UInt32>)

    public var description: String {
        switch self {
        case .zeroStart: return "it starts at address 0 but is not empty"
        case .endBeforeStart: return "its end lies before its start"
        case let .outsideFlash(r):
            return "it reaches beyond the flash (\(Hex.address(r.lowerBound))-\(Hex.address(r.upperBound)))"
        case let .outsideApplication(r):
            return "it lies outside the application area (\(Hex.address(r.lowerBound))-\(Hex.address(r.upperBound)))"
        }
    }
}

/// The last thing that went wrong while writing blocks.
public enum WriteProblem: Sendable, Equatable, CustomStringConvertible {
    /// No acknowledgement within the block timeout.
    case noAcknowledgement(Duration)
    /// The board answered `01 AA`: a packet arrived out of order and the block was dropped.
    case outOfOrder
    /// No answer to the REGION_INFO sent to resynchronise the packet numbers.
    case noResyncAnswer(Duration)
    /// The link dropped.
    case linkLost(DisconnectReason)
    /// A write could not be handed to the link.
    case writeFailed(TransportError)

    public var description: String {
        switch self {
        case let .noAcknowledgement(d): return "no acknowledgement within \(d.shortText)"
        case .outOfOrder: return "the board reported a packet out of order (01 AA)"
        case let .noResyncAnswer(d): return "no answer to REGION_INFO within \(d.shortText)"
        case let .linkLost(r): return "the link dropped: \(r)"
        case let .writeFailed(e): return "a write failed: \(e)"
        }
    }
}

/// Which bound of a write run was exhausted.
public enum RetryBudget: Sendable, Equatable, CustomStringConvertible {
    /// The per-block retry limit.
    case block(limit: Int)
    /// The whole run's retry limit.
    case run(limit: Int)
    /// The run deadline.
    case deadline(Duration)
    /// The attempts of the REGION_INFO that resynchronises the packet numbers.
    case resyncAttempts(Int)

    public var description: String {
        switch self {
        case let .block(n): return "the limit of \(n) retries per block"
        case let .run(n): return "the limit of \(n) retries per run"
        case let .deadline(d): return "the deadline of \(d.shortText) for the whole write"
        case let .resyncAttempts(n): return "the limit of \(n) unanswered REGION_INFO requests"
        }
    }
}

/// The one error type of the partial-flashing layer. Every message says what went
/// wrong and what to do about it.
public enum PartialFlashError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection does not offer the partial-flashing service.
    case serviceMissing
    /// A request was sent `attempts` times without an answer.
    case noAnswer(request: String, attempts: Int, timeout: Duration)
    /// A notification could not be decoded.
    case malformedNotification(bytes: [UInt8], problem: FrameError)
    /// REGION_INFO answered with a region that was never asked for.
    case unexpectedRegion(requested: UInt8, got: UInt8)
    /// The board reported an impossible region.
    case invalidRegion(RegionInfo, RegionProblem)
    /// The board still runs its application after `switches` reboots into pairing mode.
    case staysInApplicationMode(switches: Int)
    /// The board did not drop the link after a command that reboots it.
    case rebootNotObserved(after: String, waited: Duration)
    /// Connecting again after a link loss failed `attempts` times.
    case reconnectFailed(attempts: Int, lastError: TransportError)
    /// The link dropped more often than `PartialFlashSettings.reconnectLimit` allows.
    case tooManyLinkLosses(count: Int, last: DisconnectReason)
    /// The program's data does not fit the region the board can take.
    case programDoesNotFit(program: Range<UInt32>, writable: Range<UInt32>)
    /// The program does not start on a flash page, so its first page cannot be erased.
    case programNotPageAligned(start: UInt32, pageSize: UInt32)
    /// The plan holds no block; END_OF_TRANSMISSION without a written block would corrupt the board.
    case nothingToWrite
    /// A retry bound was exhausted while writing `block` (index in the plan).
    case gaveUp(block: Int, address: UInt32, retries: Int, budget: RetryBudget, lastProblem: WriteProblem?)
    /// The board sent `count` write answers that no transmission accounts for (after the last
    /// block was acknowledged, or more than one for a transmission). Every transmission yields
    /// at most one answer, so an answer was duplicated on its way and the writer may have taken
    /// the copy for a later block's answer: that block may not have been written.
    case unaccountedAnswers(count: Int)
    /// After the reboot the board does not report the program that was written.
    case verificationFailed(expectedStart: UInt32, expectedHash: [UInt8], reported: RegionInfo)
    /// Between the decision and the write (the restart into pairing mode) the board's regions changed.
    case boardChanged(before: BoardMemoryMap, after: BoardMemoryMap)
    /// The board still comes back in pairing mode after `rewrites` page rewrites ended with
    /// END_OF_TRANSMISSION: `flashIncomplete` is not cleared.
    case staysInPairingMode(rewrites: Int)

    /// What went wrong and what to do about it.
    public var description: String { "\(problem); \(advice)" }

    /// What went wrong, without the advice: the words for a failure that a full update
    /// then made good, where "try again" would be wrong.
    public var problem: String {
        switch self {
        case .serviceMissing:
            return "the board does not offer the partial-flashing service"
        case let .noAnswer(request, attempts, timeout):
            return "the board did not answer \(request) (\(attempts) attempts, \(timeout.shortText) each)"
        case let .malformedNotification(bytes, problem):
            return
                "the board sent a notification that is not a partial-flashing answer (\(Hex.bytes(bytes, separator: " "))): \(problem)"
        case let .unexpectedRegion(requested, got):
            return "the board answered REGION_INFO \(requested) with region \(got)"
        case let .invalidRegion(r, problem):
            return
                "the board reported region \(r.id) as \(Hex.address(r.start))-\(Hex.address(r.end)), which is impossible: \(problem)"
        case let .staysInApplicationMode(n):
            return "the board still runs its program after \(n) reboots into pairing mode"
        case let .rebootNotObserved(after, waited):
            return "the board did not restart within \(waited.shortText) after \(after)"
        case let .reconnectFailed(attempts, last):
            return "could not connect to the board again (\(attempts) attempts, last: \(last))"
        case let .tooManyLinkLosses(count, last):
            return "the link dropped \(count) times (last: \(last))"
        case let .programDoesNotFit(program, writable):
            return
                "the program (\(Hex.address(program.lowerBound))-\(Hex.address(program.upperBound))) does not fit the region "
                + "the board can take (\(Hex.address(writable.lowerBound))-\(Hex.address(writable.upperBound)))"
        case let .programNotPageAligned(start, page):
            return "the program starts at \(Hex.address(start)), not on a \(page)-byte flash page"
        case .nothingToWrite:
            return "the program holds no data to write"
        case let .gaveUp(block, address, retries, budget, last):
            let lastText = last.map { "; last problem: \($0)" } ?? ""
            return
                "partial flashing gave up on block \(block) (address \(Hex.address(address))) after \(retries) retries, "
                + "reaching \(budget)\(lastText)"
        case let .unaccountedAnswers(count):
            return "the board sent \(count) more write answer(s) than blocks were sent (a duplicated notification), "
                + "so a block may have been skipped and the program may be incomplete"
        case let .boardChanged(before, after):
            return
                "the board's regions changed while it restarted into pairing mode (runtime \(before.runtime.hash.hexString), "
                + "program \(before.program.hash.hexString) at \(Hex.address(before.program.start)) before; runtime "
                + "\(after.runtime.hash.hexString), program \(after.program.hash.hexString) at \(Hex.address(after.program.start)) after)"
        case let .staysInPairingMode(rewrites):
            return "the program is on the board, but the board still starts in pairing mode after \(rewrites) "
                + "attempt\(rewrites == 1 ? "" : "s") to end the unfinished flash that keeps it there (flashIncomplete)"
        case let .verificationFailed(start, hash, reported):
            return
                "after flashing, the board reports program \(reported.hash.hexString) at \(Hex.address(reported.start)), "
                + "expected \(hash.hexString) at \(Hex.address(start))"
        }
    }

    /// What to do about it, for a flash that ends with this error.
    public var advice: String {
        switch self {
        case .serviceMissing: return "put it into Bluetooth (pairing) mode or use a full flash"
        case .noAnswer: return "move it closer, reset it into Bluetooth mode and try again"
        case .malformedNotification: return "its firmware may not support partial flashing, use a full flash"
        case .unexpectedRegion: return "its firmware does not follow the protocol, use a full flash"
        case .invalidRegion, .programDoesNotFit, .programNotPageAligned: return "use a full flash"
        case .staysInApplicationMode:
            return "put it into Bluetooth mode by hand (A+B and reset, or reset three times) and try again"
        case .rebootNotObserved: return "reset it and try again"
        case .reconnectFailed: return "check that it is powered and in Bluetooth mode"
        case .tooManyLinkLosses: return "move the board closer and try again"
        case .nothingToWrite: return "check the firmware file"
        case .gaveUp: return "the board's program is incomplete: flash it again (a full flash replaces it)"
        case .unaccountedAnswers: return "flash it again with a full flash"
        case .boardChanged: return "nothing was written: run bitflash again"
        case .staysInPairingMode: return "run bitflash again, or flash the file over USB"
        case .verificationFailed: return "flash it again or use a full flash"
        }
    }
}

extension PartialFlashError: DomainError {
    public var failureKind: FailureKind { .flashFailed }
}
