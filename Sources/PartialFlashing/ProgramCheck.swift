import Diagnostics
import FirmwareImage
import PartialFlashingFrames
import Transport

/// How far the end of a flash was confirmed on the board.
public enum Verification: Sendable, Equatable {
    /// Read back after the board's last restart: STATUS says application mode and REGION_INFO 2
    /// reports the program's start and hash (`ReadBackReader`).
    case verified
    /// The program is on the board (written, or found there), but the board could not be read
    /// back running it in application mode: why, in words.
    case unverified(String)
}

/// What `ProgramCheck` found.
public enum ProgramCheckResult: Sendable, Equatable {
    /// The board runs the program in application mode. `rewrites`: the page rewrites that
    /// cleared `flashIncomplete` on the way (nil when none was needed).
    case verified(ReadBack, rewrites: PartialFlashStats?)
    /// The board could not be read back in application mode (see `Verification.unverified`).
    case unverified(String, rewrites: PartialFlashStats?)
    /// The board came back in pairing mode after a restart into its program, so `flashIncomplete`
    /// is set, and nothing tells whether its program is complete (`knownComplete` was false): it
    /// reports the program's hash, which sits in the first page a partial flash writes, so a flash
    /// cut short after that page looks the same (docs/protocols/board-storage.md §6, the trap).
    case flashIncomplete(BoardMemoryMap)

    /// The verification this result amounts to (nil for `flashIncomplete`, which needs a write).
    public var verification: Verification? {
        switch self {
        case .verified: return .verified
        case let .unverified(why, _): return .unverified(why)
        case .flashIncomplete: return nil
        }
    }
}

/// Confirms that a board runs a program in application mode after a restart, and ends an
/// unfinished flash that keeps it in pairing mode.
///
/// 1. Reach the board: read it on the live link, or wait for the restart's link drop, or send
///    `FF 01` first; then connect again, for at most `restartWindow` (see there for why a board
///    that is not back by then does not advertise).
/// 2. Read STATUS and REGION_INFO 2, paced one connection interval apart, and REGION_INFO 1 too
///    from a board in pairing mode (`ReadBackReader`).
/// 3. In application mode with the program's start and hash: verified. Anything else there:
///    `PartialFlashError.verificationFailed`.
/// 4. In pairing mode the board booted with `flashIncomplete` (the runtime keeps it until an
///    END_OF_TRANSMISSION completes, through resets, Nordic DFU and MCUboot swaps). When this
///    computer knows the board's flash holds the whole program (`knownComplete`: after every
///    block was acknowledged, or after a full update of this file), it rewrites one page as it
///    is, opener first, and sends END_OF_TRANSMISSION directly after the page's last
///    acknowledged block (`PartialFlashWriter.init(rewritingPageOf:settings:)`,
///    docs/protocols/board-storage.md §7), then goes back to 1, at most `pageRewriteLimit` times.
///    Without that knowledge it reports `.flashIncomplete`: the program must be written again.
///
/// A board that is reached but cannot be read (no partial-flashing service, no answer) is
/// reported unverified with the reason.
public struct ProgramCheck: FlowMachine {
    public typealias Output = ProgramCheckResult
    public typealias Report = PartialFlashReport

    /// Where the check starts.
    public enum Start: Sendable, Equatable {
        /// The link is up and the board runs what it will run: read it now.
        case connected
        /// The link just dropped because the board restarted: connect again.
        case restarted
        /// The board is about to restart (a bootloader activating a new application): wait for
        /// the link to drop (closing it after `rebootTimeout`), then connect again.
        case restarting
        /// Restart the board into its program (`FF 01`) on the live link, then as `restarting`.
        case restart
    }

    public private(set) var outcome: Result<ProgramCheckResult, any Error>?
    /// Page rewrites made so far, with their counters.
    public private(set) var rewrites: PartialFlashStats?

    private enum State: Sendable {
        case idle, awaitingDrop, closingLink, connecting(attempts: Int, windowEnds: Duration)
        case reading(ReadBackReader), rewriting(PartialFlashWriter), finished
    }

    private let image: MemoryImage
    private let program: MakeCodeProgram
    private let family: ChipFamily
    private let settings: PartialFlashSettings
    private let start: Start
    private let knownComplete: Bool
    private let acceptedHashes: [[UInt8]]
    private var state = State.idle
    private var lastConnectError: TransportError?

    /// - Parameters:
    ///   - image, program, family: the file's board image and program, and the board's family.
    ///   - start: how the board is reached first.
    ///   - knownComplete: the board's flash holds the whole program (every block acknowledged,
    ///     or a full update of this file): a board found in pairing mode gets a page rewrite.
    ///   - acceptedHashes: program hashes a board in pairing mode may report besides the
    ///     program's before its page is rewritten: the hash it reported before this computer's
    ///     write (the runtime scans its flash at each REGION_INFO, so a board whose flash holds
    ///     the whole program reports the program's own hash; these only widen the check).
    public init(
        image: MemoryImage, program: MakeCodeProgram, family: ChipFamily,
        settings: PartialFlashSettings = PartialFlashSettings(),
        start: Start, knownComplete: Bool, acceptedHashes: [[UInt8]] = []
    ) {
        self.image = image
        self.program = program
        self.family = family
        self.settings = settings
        self.start = start
        self.knownComplete = knownComplete
        self.acceptedHashes = acceptedHashes
    }

    /// Starts the check (for `.connected`, on the link `connection` describes).
    public mutating func begin(now: Duration, connection: ConnectionInfo? = nil) -> [FlowAction] {
        guard case .idle = state else { return [] }
        let opening: [FlowAction] = [.report(.phase(.verify))]
        switch start {
        case .connected:
            return opening + read(connection ?? ConnectionInfo(services: [], mtu: 23), now: now)
        case .restarted:
            return opening + connectAgain(now: now)
        case .restarting:
            state = .awaitingDrop
            return opening + [.startTimer(PartialFlashTimer.reboot, settings.rebootTimeout)]
        case .restart:
            state = .awaitingDrop
            let bytes = PartialFlashingRequest.reset(.application).bytes
            return opening + [
                Self.report(.restartingIntoProgram),
                Self.report(.sent(bytes)),
                .write(PartialFlashingGATT.characteristic, bytes, .command),
                .startTimer(PartialFlashTimer.reboot, settings.rebootTimeout)
            ]
        }
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard outcome == nil else { return [] }
        switch state {
        case .idle:
            guard case let .start(info) = event else { return [] }
            return begin(now: now, connection: info)
        case var .reading(reader):
            let actions = reader.handle(event, now: now)
            state = .reading(reader)
            guard let result = reader.outcome else { return actions }
            return actions.filter { $0 != .finish } + readFinished(result, now: now)
        case var .rewriting(writer):
            let actions = writer.handle(event, now: now)
            state = .rewriting(writer)
            guard let result = writer.outcome else { return actions }
            return actions.filter { $0 != .finish } + rewriteFinished(result, now: now)
        case .awaitingDrop, .closingLink:
            switch event {
            case let .disconnected(reason):
                return [.cancelTimer(PartialFlashTimer.reboot), Self.report(.boardRestarts(reason))]
                    + connectAgain(now: now)
            case .timerFired(PartialFlashTimer.reboot):
                if case .awaitingDrop = state {
                    state = .closingLink
                    return [
                        Self.report(.noDisconnect(waited: settings.rebootTimeout)),
                        .disconnect, .startTimer(PartialFlashTimer.reboot, settings.rebootTimeout)
                    ]
                }
                return fail(
                    PartialFlashError.rebootNotObserved(
                        after: start == .restart ? "FF 01" : "the update", waited: settings.rebootTimeout))
            default:
                return []
            }
        case let .connecting(attempts, windowEnds):
            switch event {
            case let .connected(info):
                return [.cancelTimer(PartialFlashTimer.restartWindow)] + read(info, now: now)
            case let .connectFailed(error):
                lastConnectError = error
                guard attempts < settings.reconnectAttempts, now + settings.reconnectDelay < windowEnds else {
                    return [.cancelTimer(PartialFlashTimer.restartWindow)] + unreachable()
                }
                state = .connecting(attempts: attempts + 1, windowEnds: windowEnds)
                return [
                    Self.report(.connectFailed(error, attempt: attempts + 1, of: settings.reconnectAttempts)),
                    .connect(after: settings.reconnectDelay, to: .application)
                ]
            case .timerFired(PartialFlashTimer.restartWindow):
                return unreachable()
            default:
                return []
            }
        case .finished:
            return []
        }
    }

    // MARK: - Steps

    private mutating func connectAgain(now: Duration) -> [FlowAction] {
        state = .connecting(attempts: 1, windowEnds: now + settings.restartWindow)
        // The board restarts into its program (or pairing mode), at its application's address:
        // after a Nordic DFU the last link was to the bootloader, which may be at the next one.
        return [
            .startTimer(PartialFlashTimer.restartWindow, settings.restartWindow),
            .connect(after: settings.rebootReconnectDelay, to: .application)
        ]
    }

    private mutating func read(_ info: ConnectionInfo, now: Duration) -> [FlowAction] {
        var reader = ReadBackReader(family: family, settings: settings)
        let actions = reader.handle(.start(info), now: now)
        state = .reading(reader)
        guard let result = reader.outcome else { return actions }
        return actions.filter { $0 != .finish } + readFinished(result, now: now)
    }

    private mutating func readFinished(_ result: Result<ReadBack, any Error>, now: Duration) -> [FlowAction] {
        let read: ReadBack
        switch result {
        case let .failure(error):
            let why =
                (error as? PartialFlashError) == .serviceMissing
                ? "after its restart the board offers no partial-flashing service, so what it runs cannot be read"
                : "the board was reached after its restart, but could not be read: \(error)"
            return finish(.unverified(why, rewrites: rewrites))
        case let .success(r): read = r
        }
        let reportsProgram = read.program.start == program.magicAddress && read.program.hash == program.programHash
        if read.mode == .application {
            guard reportsProgram else { return fail(mismatch(read.program)) }
            return [Self.report(.verified(program: read.program))] + finish(.verified(read, rewrites: rewrites))
        }
        // In pairing mode the reader reads region 1 as well.
        guard let map = read.map else { return fail(mismatch(read.program)) }
        let sameRuntime = map.runtime.hash == program.runtimeHash && map.program.start == program.magicAddress
        guard knownComplete else {
            guard sameRuntime, reportsProgram else { return fail(mismatch(map.program)) }
            return [Self.report(.cameBackInPairingMode)] + finish(.flashIncomplete(map))
        }
        guard sameRuntime, reportsProgram || acceptedHashes.contains(map.program.hash) else {
            return fail(mismatch(map.program))
        }
        let done = rewrites?.pageRewrites ?? 0
        guard done < settings.pageRewriteLimit else {
            return fail(PartialFlashError.staysInPairingMode(rewrites: done))
        }
        return rewrite(map, now: now)
    }

    /// Rewrites the cheapest page of the program as it is and ends with END_OF_TRANSMISSION.
    private mutating func rewrite(_ map: BoardMemoryMap, now: Duration) -> [FlowAction] {
        let plan: BlockPlan
        do {
            plan = try BlockPlan(
                image: image, program: program, boardRegion: map.program, family: family,
                skipErasedBlocks: settings.skipErasedBlocks, sealProgramHash: settings.sealProgramHash)
        } catch {
            return fail(error)
        }
        var writer = PartialFlashWriter(rewritingPageOf: plan, settings: settings)
        writer.checkpointBase = .base(program: program, board: map, plan: plan)
        let note = Self.report(.rewritingPage)
        // The reader's last request was a REGION_INFO: the board's counters are at 0.
        let actions = writer.beginAfterRegionInfo(now: now)
        state = .rewriting(writer)
        guard let result = writer.outcome else { return [note] + actions }
        return [note] + actions.filter { $0 != .finish } + rewriteFinished(result, now: now)
    }

    private mutating func rewriteFinished(_ result: Result<PartialFlashStats, any Error>, now: Duration) -> [FlowAction]
    {
        switch result {
        case let .failure(error):
            outcome = .failure(error)
            state = .finished
            return [.finish]
        case let .success(stats):
            var total = rewrites ?? PartialFlashStats()
            total.add(stats)
            total.pageRewrites += 1
            rewrites = total
            return connectAgain(now: now)
        }
    }

    private mutating func unreachable() -> [FlowAction] {
        let why = Self.unreachableReason(window: settings.restartWindow, lastError: lastConnectError)
        return [Self.report(.notReadBack(window: settings.restartWindow, lastError: lastConnectError))]
            + finish(.unverified(why, rewrites: rewrites))
    }

    /// Why a board that did not come back within `window` of its restart is not verified: the
    /// reason its result carries, and which the report `notReadBack` shows.
    public static func unreachableReason(window: Duration, lastError: TransportError?) -> String {
        let last = lastError.map { " (last attempt: \($0))" } ?? ""
        return "the board did not accept a connection within \(window.shortText) of its restart\(last): "
            + "it does not advertise, which a board in pairing mode does, so most likely its program keeps Bluetooth off "
            + "in application mode (MakeCode programs without the Bluetooth extension), or it is out of range"
    }

    private func mismatch(_ reported: RegionInfo) -> PartialFlashError {
        .verificationFailed(
            expectedStart: program.magicAddress, expectedHash: program.programHash, reported: reported)
    }

    private mutating func finish(_ result: ProgramCheckResult) -> [FlowAction] {
        outcome = .success(result)
        state = .finished
        return [.finish]
    }

    private mutating func fail(_ error: any Error) -> [FlowAction] {
        outcome = .failure(error)
        state = .finished
        return [.cancelTimer(PartialFlashTimer.reboot), .cancelTimer(PartialFlashTimer.restartWindow), .finish]
    }
}
