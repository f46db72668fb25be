import Diagnostics
import FirmwareImage
import PartialFlashingFrames
import Transport

/// Restarts a board that runs its program into pairing mode (`FF 00`), once the decision is to
/// write it partially, and reads it again there.
///
/// Why pairing mode: there the runtime runs no user program, and every client of the protocol
/// writes there (docs/protocols/partial-flashing.md §4). `FF 00` stores `RebootMode`, whose next boot
/// goes to pairing mode and removes it (§2.6; docs/protocols/board-storage.md §3, §5). The switch
/// waits for the link to drop (closing it itself after `rebootTimeout`), connects again, and
/// reads STATUS and REGION_INFO 1 and 2 with `MemoryMapReader`. STATUS must now say pairing mode
/// (a board back in application mode is switched again, at most `modeSwitchLimit` times in all),
/// and both regions must still be what the decision was made on: the same runtime, the same
/// program region and hash. The last request is REGION_INFO 2, so the board's counters are reset
/// and `PartialFlashWriter.beginAfterRegionInfo` may follow at once.
public struct PairingModeSwitch: FlowMachine {
    public typealias Output = BoardMemoryMap
    public typealias Report = PartialFlashReport

    public private(set) var outcome: Result<BoardMemoryMap, any Error>?
    /// `FF 00` sent so far.
    public private(set) var switches = 0
    /// Link losses while reading again.
    public var linkLosses: Int { reader?.linkLosses ?? 0 }

    private enum State: Sendable {
        case idle, awaitingReboot, closingLink, reconnecting, reading, finished
    }

    private let decided: BoardMemoryMap
    private let family: ChipFamily
    private let settings: PartialFlashSettings
    private var state = State.idle
    private var reader: MemoryMapReader?
    private var recovery: LinkRecovery

    /// - Parameters:
    ///   - decided: the map the decision was made on (read in application mode).
    ///   - family: the board's chip family.
    ///   - settings: `rebootTimeout`, `modeSwitchLimit`, `rebootReconnectDelay`, `reconnectDelay`,
    ///     `reconnectAttempts`, and the reader's timeouts.
    public init(decided: BoardMemoryMap, family: ChipFamily, settings: PartialFlashSettings = PartialFlashSettings()) {
        self.decided = decided
        self.family = family
        self.settings = settings
        self.recovery = LinkRecovery(settings: settings)
    }

    /// Sends `FF 00` on the live link.
    public mutating func begin() -> [FlowAction] {
        guard state == .idle else { return [] }
        return restart()
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard outcome == nil else { return [] }
        if state == .reading, var reader {
            let actions = reader.handle(event, now: now)
            self.reader = reader
            guard let result = reader.outcome else { return actions }
            return actions.filter { $0 != .finish } + read(result)
        }
        switch event {
        case .start: return begin()
        case .disconnected(let reason):
            guard state == .awaitingReboot || state == .closingLink else { return [] }
            state = .reconnecting
            return [.cancelTimer(PartialFlashTimer.reboot), Self.report(.boardRestarts(reason))]
                + recovery.expectedLoss()
        case .timerFired(PartialFlashTimer.reboot):
            if state == .awaitingReboot {
                // The board kept the link: close it ourselves, as the reboot would have.
                state = .closingLink
                return [
                    Self.report(.noDisconnectAfterPairingSwitch), .disconnect,
                    .startTimer(PartialFlashTimer.reboot, settings.rebootTimeout)
                ]
            }
            if state == .closingLink {
                return fail(
                    .rebootNotObserved(after: "the switch to pairing mode (FF 00)", waited: settings.rebootTimeout))
            }
            return []
        case let .connected(info):
            guard state == .reconnecting else { return [] }
            recovery.connected()
            state = .reading
            var fresh = MemoryMapReader(family: family, settings: settings)
            let actions = fresh.handle(.start(info), now: now).filter { $0 != .report(.phase(.readingMemoryMap)) }
            reader = fresh
            guard let result = fresh.outcome else { return [Self.report(.connectedAgain)] + actions }
            return actions.filter { $0 != .finish } + read(result)
        case let .connectFailed(error):
            guard state == .reconnecting else { return [] }
            switch recovery.connectFailed(error) {
            case let .success(actions): return actions
            case let .failure(e): return fail(e)
            }
        default:
            return []
        }
    }

    private mutating func restart() -> [FlowAction] {
        guard switches < settings.modeSwitchLimit else { return fail(.staysInApplicationMode(switches: switches)) }
        switches += 1
        state = .awaitingReboot
        let bytes = PartialFlashingRequest.reset(.pairing).bytes
        return [
            .report(.phase(.switchingToPairingMode)),
            Self.report(.switchingToPairingMode),
            Self.report(.sent(bytes)),
            .write(PartialFlashingGATT.characteristic, bytes, .command),
            .startTimer(PartialFlashTimer.reboot, settings.rebootTimeout)
        ]
    }

    private mutating func read(_ result: Result<BoardMemoryMap, any Error>) -> [FlowAction] {
        let map: BoardMemoryMap
        switch result {
        case let .failure(error):
            outcome = .failure(error)
            state = .finished
            return [.finish]
        case let .success(m): map = m
        }
        if map.mode == .application {
            return [Self.report(.backInApplicationMode)] + restart()
        }
        guard map.runtime == decided.runtime, map.program == decided.program,
            map.protocolVersion == decided.protocolVersion
        else {
            return fail(.boardChanged(before: decided, after: map))
        }
        outcome = .success(map)
        state = .finished
        return [Self.report(.inPairingMode(map)), .finish]
    }

    private mutating func fail(_ error: PartialFlashError) -> [FlowAction] {
        outcome = .failure(error)
        state = .finished
        return [.cancelTimer(PartialFlashTimer.reboot), .finish]
    }
}
