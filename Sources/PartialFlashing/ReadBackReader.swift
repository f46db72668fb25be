import Diagnostics
import FirmwareImage
import PartialFlashingFrames
import Transport

/// What a board reported when it was read back after a restart.
public struct ReadBack: Sendable, Equatable {
    /// The partial-flashing protocol version from STATUS.
    public var protocolVersion: UInt8
    /// The mode the board runs in (STATUS).
    public var mode: BoardMode
    /// Region 2: the program's start (its magic) and hash, from the flash as it is now.
    public var program: RegionInfo
    /// Region 1, read only from a board in pairing mode, which may need a page rewrite.
    public var runtime: RegionInfo?

    /// The whole memory map, when region 1 was read.
    public var map: BoardMemoryMap? {
        runtime.map { BoardMemoryMap(protocolVersion: protocolVersion, mode: mode, runtime: $0, program: program) }
    }
}

/// Reads a restarted board back: STATUS and REGION_INFO 2, and REGION_INFO 1 as well only when
/// the board is in pairing mode. Nothing it sends changes the board's flash.
///
/// What "verified" needs is the mode (application mode: `flashIncomplete` is gone, it sends
/// every boot to pairing mode) and the program region's start and hash, which the board takes
/// from its flash at each REGION_INFO (CODAL and DAL `MicroBitPartialFlashingService::onDataWritten`
/// build a `MicroBitMemoryMap` per request). Region 1 adds nothing to that: its hash is the 8
/// bytes at magic + 16, in the same header block as the program hash, and says nothing of the
/// runtime that runs (a partial flash never writes the runtime; a full update's bootloader
/// checked the whole image).
///
/// Pacing: when the link's connection interval is known, REGION_INFO 2 is sent one interval
/// after STATUS, without waiting for STATUS's answer. It then leaves in the connection event
/// after STATUS's, and each answer leaves in an event of its own: S113 holds one notification
/// (`hvn_tx_queue_size` 1, CODAL `MicroBitBLEChar::notifyChrValue` ignores a failed
/// `sd_ble_gatts_hvx`), so two answers made in one event would lose the second. The read
/// takes 2 connection intervals instead of 4. When the interval is not known, REGION_INFO 2
/// waits for STATUS's answer.
///
/// On an adapter that serves other boards, an event can be pushed back behind theirs (one radio,
/// events never overlap) until both requests leave in it; the board then makes both answers in
/// one event and loses REGION_INFO 2's. So once STATUS's answer is in, REGION_INFO 2's gets
/// `lostAnswerIntervals` connection intervals (it comes one interval later when nothing is lost)
/// before it is asked again, rather than the whole answer timeout. Either answer counts: both
/// read the same flash, and nothing is written in between.
///
/// Requests have a timeout and a bounded number of attempts; a lost link is connected again
/// (`LinkRecovery`) and the read starts over. In pairing mode the last request is a
/// REGION_INFO, so the board's packet counters are 0 when the reader finishes.
public struct ReadBackReader: FlowMachine {
    public typealias Output = ReadBack
    public typealias Report = PartialFlashReport

    public private(set) var outcome: Result<ReadBack, any Error>?
    /// Link losses while reading.
    public var linkLosses: Int { recovery.losses }

    private enum State: Sendable, Equatable {
        case idle, awaitingStatus(attempt: Int), awaitingRegion(UInt8, attempt: Int), reconnecting, finished
    }

    /// The wait between STATUS and the REGION_INFO 2 sent behind it.
    static let pace = TimerID("partial-flash.read-back-pace")
    /// Connection intervals REGION_INFO 2's answer gets after STATUS's before it is taken for lost.
    static let lostAnswerIntervals = 4

    private let family: ChipFamily
    private let settings: PartialFlashSettings
    private var state = State.idle
    private var recovery: LinkRecovery
    private var answerTimerRunning = false
    private var pacing = false
    private var programAsked = false
    private var status: (version: UInt8, mode: BoardMode)?
    private var program: RegionInfo?
    private var runtime: RegionInfo?
    /// The link's connection interval when the driver knows it (the pace between requests).
    private var interval: Duration?
    private let characteristic = PartialFlashingGATT.characteristic

    public init(family: ChipFamily, settings: PartialFlashSettings = PartialFlashSettings()) {
        self.family = family
        self.settings = settings
        self.recovery = LinkRecovery(settings: settings)
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard outcome == nil else { return [] }
        switch event {
        case let .start(info):
            guard state == .idle else { return [] }
            return begin(info)
        case let .connected(info):
            guard state == .reconnecting else { return [] }
            recovery.connected()
            return [Self.report(.connectedAgain)] + begin(info)
        case let .connectFailed(error):
            guard state == .reconnecting else { return [] }
            return settle(recovery.connectFailed(error))
        case let .notification(c, bytes):
            guard c == characteristic else { return [Self.report(.ignoredNotification(from: c))] }
            return received(bytes)
        case .timerFired(Self.pace):
            guard pacing else { return [] }
            pacing = false
            return askProgram()
        case .timerFired(PartialFlashTimer.answer):
            guard answerTimerRunning else { return [] }
            answerTimerRunning = false
            return timedOut()
        case .timerFired:
            return []
        case let .disconnected(reason):
            switch state {
            case .awaitingStatus, .awaitingRegion:
                state = .reconnecting
                return stopTimers() + settle(recovery.unexpectedLoss(reason))
            default:
                return []
            }
        case let .writeFailed(_, error):
            // The answer timer covers a lost request.
            return [Self.report(.writeFailed(error))]
        }
    }

    // MARK: - Requests

    private mutating func begin(_ info: ConnectionInfo) -> [FlowAction] {
        // An empty service list means the driver does not know; the answers will tell.
        if !info.services.isEmpty, !info.services.contains(PartialFlashingGATT.service) {
            return fail(.serviceMissing)
        }
        status = nil
        program = nil
        runtime = nil
        programAsked = false
        var actions: [FlowAction] = [.subscribe(characteristic)] + sendStatus(attempt: 1)
        interval = info.connectionInterval.flatMap { $0 > .zero ? $0 : nil }
        if let interval {
            pacing = true
            actions.append(.startTimer(Self.pace, interval))
        }
        return actions
    }

    private mutating func sendStatus(attempt: Int) -> [FlowAction] {
        state = .awaitingStatus(attempt: attempt)
        return send(.status) + [armAnswer()]
    }

    /// REGION_INFO 2 behind STATUS (paced), or after its answer.
    private mutating func askProgram() -> [FlowAction] {
        programAsked = true
        if case .awaitingStatus = state { return send(.regionInfo(2)) }
        return sendRegion(2, attempt: 1)
    }

    private mutating func sendRegion(_ id: UInt8, attempt: Int) -> [FlowAction] {
        if id == 2 { programAsked = true }
        state = .awaitingRegion(id, attempt: attempt)
        return send(.regionInfo(id)) + [armAnswer()]
    }

    private func send(_ request: PartialFlashingRequest) -> [FlowAction] {
        let bytes = request.bytes
        return [Self.report(.sent(bytes)), .write(characteristic, bytes, .command)]
    }

    private mutating func armAnswer(within timeout: Duration? = nil) -> FlowAction {
        answerTimerRunning = true
        return .startTimer(PartialFlashTimer.answer, min(timeout ?? settings.answerTimeout, settings.answerTimeout))
    }

    private mutating func stopTimers() -> [FlowAction] {
        var actions: [FlowAction] = []
        if answerTimerRunning { actions.append(.cancelTimer(PartialFlashTimer.answer)) }
        if pacing { actions.append(.cancelTimer(Self.pace)) }
        answerTimerRunning = false
        pacing = false
        return actions
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
            status = (version, mode)
            answerTimerRunning = false
            return [trace, .cancelTimer(PartialFlashTimer.answer)] + next()
        case let (.regionInfo(region), .awaitingStatus) where region.id == 2 && programAsked && program == nil:
            // The paced REGION_INFO 2 answered while STATUS's answer is still missing (lost).
            if let error = took(region) { return [trace] + fail(error) }
            return [trace]
        case let (.regionInfo(region), .awaitingRegion(id, _)) where region.id == id:
            answerTimerRunning = false
            if let error = took(region) { return [trace] + fail(error) }
            return [trace, .cancelTimer(PartialFlashTimer.answer)] + next()
        case let (.regionInfo(region), .awaitingRegion(id, _)) where region.id != 1 && region.id != 2:
            return [trace] + fail(.unexpectedRegion(requested: id, got: region.id))
        default:
            return [trace, Self.report(.ignoredStray)]
        }
    }

    /// Keeps a region's answer; the error when the region cannot exist on the board.
    private mutating func took(_ region: RegionInfo) -> PartialFlashError? {
        do {
            try region.validate(against: family.layout)
        } catch {
            return error
        }
        if region.id == 2 { program = region } else { runtime = region }
        return nil
    }

    /// The next request, or the end.
    private mutating func next() -> [FlowAction] {
        guard let status else { return sendStatus(attempt: 1) }
        guard let program else {
            // The paced request is about to go (the pace timer) or on its way: wait for its answer.
            if pacing {
                state = .awaitingRegion(2, attempt: 1)
                return []
            }
            if programAsked, case .awaitingStatus = state {
                // Sent behind STATUS: its answer comes an interval after STATUS's, unless both
                // requests left in one pushed-back event and the board lost it.
                state = .awaitingRegion(2, attempt: 1)
                return [armAnswer(within: interval.map { $0 * Self.lostAnswerIntervals })]
            }
            return sendRegion(2, attempt: 1)
        }
        if status.mode == .pairing, runtime == nil { return sendRegion(1, attempt: 1) }
        outcome = .success(
            ReadBack(protocolVersion: status.version, mode: status.mode, program: program, runtime: runtime))
        state = .finished
        return stopTimers() + [
            Self.report(.readBack(mode: status.mode, program: program)),
            .finish
        ]
    }

    private mutating func timedOut() -> [FlowAction] {
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
                        request: "REGION_INFO \(id) (00 0\(id))", attempts: attempt, timeout: settings.answerTimeout))
            }
            return [Self.report(.noAnswerToRegionInfo(id))]
                + sendRegion(id, attempt: attempt + 1)
        default:
            return []
        }
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
        return stopTimers() + [.finish]
    }
}
