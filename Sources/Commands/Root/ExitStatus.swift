import Diagnostics
import Flashing

/// How a run of bitflash ends, as the exit status a script sees: the sysexits(3) codes
/// docs/json-and-exit-codes.md documents, plus 2 for a flash that could not be read back and
/// 3 for a flash that succeeded only after falling back.
enum ExitStatus: Int32, Sendable, Equatable, CaseIterable, Codable {
    /// Flashed and verified, or already up to date (and read back).
    case ok = 0
    /// Written (every block acknowledged and the flash ended, or a full update completed), or
    /// found up to date, but the board could not be read back running the program in application
    /// mode: the result's `verification` is `unverified` and its `verificationNote` says why
    /// (for example a program that keeps Bluetooth off). Not a success: nothing confirmed it.
    case writtenUnverified = 2
    /// Flashed and verified, but partial flashing failed and the full update was used.
    case okAfterFallback = 3
    /// Bad command line, or a request that contradicts itself (EX_USAGE).
    case usage = 64
    /// The firmware file is malformed or has no image for this board (EX_DATAERR).
    case badFirmware = 65
    /// A file could not be read (EX_NOINPUT).
    case cannotRead = 66
    /// No such board: not found, out of range, or not connectable (EX_UNAVAILABLE).
    case boardNotFound = 69
    /// Internal error: a bug in bitflash (EX_SOFTWARE).
    case internalError = 70
    /// A file could not be written (EX_CANTCREAT).
    case cannotWrite = 73
    /// Flashing failed; the message says what to do (EX_IOERR).
    case flashFailed = 74
    /// Bluetooth is not usable (bluetoothd not running, no adapter, or the adapter is off), or something
    /// else is held for now: a port, a state folder (EX_TEMPFAIL).
    case bluetoothUnavailable = 75
    /// The board connected but BlueZ never resolved its services, or BlueZ sent what it never
    /// sends (EX_PROTOCOL): the stack broke its side of the protocol.
    case servicesNotResolved = 76
    /// The board refused to pair (EX_NOPERM).
    case pairingRefused = 77
    /// Stopped by Ctrl-C (`watch`, `demo`): 128 + SIGINT, as a shell reports it.
    case interrupted = 130
    /// Stopped by SIGTERM (`watch`): 128 + SIGTERM, as a shell reports it.
    case terminated = 143

    /// What the status means: the table of docs/json-and-exit-codes.md, word for word (without its Markdown).
    var meaning: String {
        switch self {
        case .ok: return "flashed and verified, or already up to date"
        case .writtenUnverified:
            return "written, but not read back running in application mode (the result's verificationNote says why)"
        case .okAfterFallback: return "flashed and verified after falling back from partial flashing to a full update"
        case .usage:
            return
                "bad command line (an output that is the input file included; a number outside its option's range, see docs/options.md)"
        case .badFirmware:
            return "the firmware file is malformed (the message names file, line and column), larger than its "
                + "format can be, has no image for this board, or is for another board (see --force)"
        case .cannotRead: return "a file could not be read (missing, not permitted, a directory)"
        case .boardNotFound: return "board not found or not connectable"
        case .internalError: return "internal error in bitflash (please report it)"
        case .cannotWrite: return "an output file could not be written (the previous file is left as it was)"
        case .flashFailed: return "flashing failed (the message says what to do)"
        case .bluetoothUnavailable:
            return
                "Bluetooth not available (bluetoothd not running, no adapter, or the adapter is off), or something else "
                + "held for now: a port another program holds, simulated boards another bitflash run is using"
        case .servicesNotResolved:
            return "the board connected but BlueZ never resolved its services, or BlueZ sent what it "
                + "never sends (not a radio problem: running again does not help)"
        case .pairingRefused: return "the board refused to pair (or needs a bond and --no-pair was given)"
        case .interrupted:
            return "stopped by Ctrl-C (watch, demo); a flash under way was finished or reported as not finished"
        case .terminated: return "stopped by SIGTERM (watch); a flash under way was reported as not finished"
        }
    }

    /// 75 by what it means beyond Bluetooth: something bitflash needs is held or missing for now
    /// (a port another program holds, a state folder another bitflash holds); trying later may work.
    static var temporarilyUnavailable: ExitStatus { .bluetoothUnavailable }

    /// 76 by what it means beyond resolving services: the Bluetooth stack sent what its protocol
    /// never allows (a software problem on this computer, not a radio one).
    static var stackViolation: ExitStatus { .servicesNotResolved }

    /// True for the statuses of a run that left every board running what it was sent, read back.
    /// `writtenUnverified` is not one: nothing confirmed what the board runs.
    var succeeded: Bool { self == .ok || self == .okAfterFallback }
}

/// The one table from a failure's kind (what the library says went wrong) to the exit status a
/// script sees. Only the command line knows exit statuses.
extension ExitStatus {
    init(_ kind: FailureKind) {
        switch kind {
        case .invalidRequest: self = .usage
        case .badFirmware, .malformedData: self = .badFirmware
        case .unreadable: self = .cannotRead
        case .unwritable: self = .cannotWrite
        case .boardUnavailable: self = .boardNotFound
        case .flashFailed: self = .flashFailed
        case .bluetoothUnavailable, .heldElsewhere: self = .bluetoothUnavailable
        case .servicesNotResolved, .stackViolation: self = .servicesNotResolved
        case .pairingRefused: self = .pairingRefused
        case .internalFault: self = .internalError
        }
    }

    /// The status of a run that ended with `error`: the command line's own status for its errors,
    /// else the error's kind, else `fallback` (an error that says no kind is a failed flash).
    static func of(_ error: any Error, otherwise fallback: ExitStatus = .flashFailed) -> ExitStatus {
        if let error = error as? CLIError { return error.exitStatus }
        if let error = error as? any DomainError { return ExitStatus(error.failureKind) }
        return fallback
    }

    /// How one board's flash ends: its failure's kind when it failed, 2 when it was not read back,
    /// 3 when it was verified after a fallback, else 0 (a dry run too).
    init(_ result: FlashResult) {
        if result.error != nil {
            self = ExitStatus(result.failureKind ?? .flashFailed)
            return
        }
        switch result.verification {
        case .failed: self = .flashFailed
        case .unverified: self = .writtenUnverified
        case .verified: self = result.fallback ? .okAfterFallback : .ok
        case .dryRun: self = .ok
        }
    }

    /// How a run that flashed these boards exits: the first failure's status (74 for a failed
    /// flash), else 2 when any board was not read back, else 3 after any fallback, else 0.
    init(results: [FlashResult]) {
        if let failed = results.first(where: { $0.error != nil }) {
            self = ExitStatus(failed)
            return
        }
        if results.contains(where: { $0.verification == .unverified }) {
            self = .writtenUnverified
            return
        }
        self = results.contains(where: \.fallback) ? .okAfterFallback : .ok
    }
}
