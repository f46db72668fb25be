import Diagnostics
import FirmwareImage
import PartialFlashingFrames
import Transport

/// Reads what a board reports about itself: STATUS (`EE`), then REGION_INFO 1 and 2, in
/// whatever mode the board is in. Nothing it sends changes the board.
///
/// Each request has a timeout and a bounded number of attempts; a link that drops is
/// connected again (`LinkRecovery`) and the read starts over from STATUS. Answers are
/// validated (malformed frames, unrequested regions, impossible regions); stray
/// notifications (a late `01 FF`, a repeated answer) are traced and ignored. The last
/// request is REGION_INFO 2, so when the reader finishes the board's packet counters are
/// reset and writing may start at 0 (the barrier `PartialFlashWriter` needs).
///
/// Deciding what to do with the map, and restarting a board that runs its program into
/// pairing mode before writing (`PairingModeSwitch`), are the caller's.
public struct MemoryMapReader: FlowMachine {
    public typealias Output = BoardMemoryMap
    public typealias Report = PartialFlashReport

    public private(set) var outcome: Result<BoardMemoryMap, any Error>?
    /// Connections made again after a link loss.
    public private(set) var reconnects = 0
    /// Link losses while reading.
    public var linkLosses: Int { recovery.losses }

    private enum State: Sendable, Equatable {
        case idle, awaitingStatus(attempt: Int), awaitingRegion(UInt8, attempt: Int)
        case reconnecting, finished
    }

    private let settings: PartialFlashSettings
    private var family: ChipFamily?
    private var state = State.idle
    private var runningTimer: TimerID?
    private var recovery: LinkRecovery
    private var status: (version: UInt8, mode: BoardMode)?
    private var runtime: RegionInfo?
    private let characteristic = PartialFlashingGATT.characteristic

    /// - Parameters:
    ///   - family: the board's chip family, when known; regions outside its layout are refused.
    ///     When nil, the family is inferred from the runtime region's start (0x18000 or 0x1C000).
    ///   - settings: timeouts and limits (`answerTimeout`, `requestAttempts`, `reconnectDelay`,
    ///     `reconnectAttempts`, `reconnectLimit`).
    public init(family: ChipFamily? = nil, settings: PartialFlashSettings = PartialFlashSettings()) {
        self.family = family
        self.settings = settings
        self.recovery = LinkRecovery(settings: settings)
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard outcome == nil else { return [] }
        switch event {
        case let .start(info):
            guard state == .idle else { return [] }
            if let missing = checkService(info) { return missing }
            return [.report(.phase(.readingMemoryMap)), .subscribe(characteristic)] + sendStatus(attempt: 1)
        case let .notification(c, bytes):
            guard c == characteristic else { return [Self.report(.ignoredNotification(from: c))] }
            return received(bytes)
        case let .timerFired(id):
            guard id == runningTimer else { return [] }
            runningTimer = nil
            return timerFired()
        case let .disconnected(reason):
            return linkLost(reason)
        case let .connected(info):
            guard state == .reconnecting else { return [] }
            recovery.connected()
            reconnects += 1
            if let missing = checkService(info) { return missing }
            status = nil
            runtime = nil
            return [Self.report(.connectedAgain), .subscribe(characteristic)] + sendStatus(attempt: 1)
        case let .connectFailed(error):
            guard state == .reconnecting else { return [] }
            return settle(recovery.connectFailed(error))
        case let .writeFailed(_, error):
            // The answer timer covers a lost request.
            return [Self.report(.writeFailed(error))]
        }
    }

    // MARK: - Requests

    private mutating func sendStatus(attempt: Int) -> [FlowAction] {
        state = .awaitingStatus(attempt: attempt)
        return send(.status) + [arm(PartialFlashTimer.answer, settings.answerTimeout)]
    }

    private mutating func sendRegion(_ id: UInt8, attempt: Int) -> [FlowAction] {
        state = .awaitingRegion(id, attempt: attempt)
        return send(.regionInfo(id)) + [arm(PartialFlashTimer.answer, settings.answerTimeout)]
    }

    private func send(_ request: PartialFlashingRequest) -> [FlowAction] {
        let bytes = request.bytes
        return [Self.report(.sent(bytes)), .write(characteristic, bytes, .command)]
    }

    private mutating func arm(_ timer: TimerID, _ duration: Duration) -> FlowAction {
        runningTimer = timer
        return .startTimer(timer, duration)
    }

    private mutating func disarm() -> [FlowAction] {
        guard let t = runningTimer else { return [] }
        runningTimer = nil
        return [.cancelTimer(t)]
    }

    // MARK: - Answers

    private mutating func received(_ bytes: [UInt8]) -> [FlowAction] {
        let waiting: Bool
        switch state {
        case .awaitingStatus, .awaitingRegion: waiting = true
        default: waiting = false
        }
        let (trace, answer) = BoardAnswer.read(bytes, waiting: waiting)
        let notification: PartialFlashingNotification
        switch answer {
        case let .answer(n): notification = n
        case .ignored: return [trace, BoardAnswer.ignoredTrace]
        case let .malformed(error): return [trace] + fail(error)
        }
        switch (notification, state) {
        case let (.status(version, mode), .awaitingStatus):
            return [trace] + disarm() + statusReceived(version: version, mode: mode)
        case let (.regionInfo(region), .awaitingRegion(id, _)) where region.id == id:
            return [trace] + disarm() + regionReceived(region)
        case let (.regionInfo(region), .awaitingRegion(id, _)):
            if region.id == 1 && id == 2 { return [trace, Self.report(.ignoredRepeatedAnswer(region: 1))] }
            return [trace] + fail(.unexpectedRegion(requested: id, got: region.id))
        default:
            return [trace, Self.report(.ignoredStray)]
        }
    }

    private mutating func statusReceived(version: UInt8, mode: BoardMode) -> [FlowAction] {
        status = (version, mode)
        return sendRegion(1, attempt: 1)
    }

    private mutating func regionReceived(_ region: RegionInfo) -> [FlowAction] {
        if family == nil, region.id == 1 { family = ChipFamily.withRuntimeStart(region.start) }
        do {
            try region.validate(against: family?.layout)
        } catch {
            return fail(error)
        }
        guard region.id == 2, let runtime, let status else {
            runtime = region
            return sendRegion(2, attempt: 1)
        }
        let map = BoardMemoryMap(protocolVersion: status.version, mode: status.mode, runtime: runtime, program: region)
        outcome = .success(map)
        state = .finished
        return [Self.report(.memoryMap(map)), .finish]
    }

    // MARK: - Timers and the link

    private mutating func timerFired() -> [FlowAction] {
        switch state {
        case let .awaitingStatus(attempt):
            guard attempt < settings.requestAttempts else {
                return fail(.noAnswer(request: "STATUS (EE)", attempts: attempt, timeout: settings.answerTimeout))
            }
            return [Self.report(.noAnswerToStatus)] + sendStatus(attempt: attempt + 1)
        case let .awaitingRegion(id, attempt):
            guard attempt < settings.requestAttempts else {
                return fail(
                    .noAnswer(
                        request: "REGION_INFO \(id) (00 0\(id))", attempts: attempt,
                        timeout: settings.answerTimeout))
            }
            return [Self.report(.noAnswerToRegionInfo(id))]
                + sendRegion(id, attempt: attempt + 1)
        default:
            return []
        }
    }

    private mutating func linkLost(_ reason: DisconnectReason) -> [FlowAction] {
        switch state {
        case .awaitingStatus, .awaitingRegion:
            state = .reconnecting
            return disarm() + settle(recovery.unexpectedLoss(reason))
        default:
            return []
        }
    }

    private mutating func checkService(_ info: ConnectionInfo) -> [FlowAction]? {
        // An empty service list means the driver does not know; the answers will tell.
        guard !info.services.isEmpty, !info.services.contains(PartialFlashingGATT.service) else { return nil }
        return fail(.serviceMissing)
    }

    private mutating func settle(_ result: Result<[FlowAction], PartialFlashError>) -> [FlowAction] {
        switch result {
        case let .success(actions): return actions
        case let .failure(error): return fail(error)
        }
    }

    private mutating func fail(_ error: PartialFlashError) -> [FlowAction] {
        outcome = .failure(error)
        state = .finished
        return disarm() + [.finish]
    }
}
