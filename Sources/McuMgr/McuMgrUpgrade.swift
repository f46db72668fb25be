import SMP
import Transport

/// The McuMgr firmware upgrade of an MCUboot device over SMP, as a pure state
/// machine: mcumgr parameters, validate (image state read), upload, then by
/// mode test and/or confirm, reset, wait for the swap, reconnect, confirm and
/// verify (docs/protocols/mcumgr-smp.md §4).
///
/// The upload pipelines requests up to the device's buffer count, sends frames
/// up to its `buf_size` cut into MTU − 3 writes, resends from the device's offset
/// when it drops a chunk, and resumes on a new connection after a disconnect,
/// re-sending at most the chunks that were in flight.
///
/// Each state holds the data that means something in it (`McuMgrUpgrade+State`): the request
/// outstanding and its attempts, the step after a reset and when the device answered it, the
/// error a read-back reports. The link is a state of its own beside it (up, or reconnecting
/// after so many failed attempts), so that a lost link resumes the step it interrupted; what
/// spans states is the run's `Budget` and `BoardRecord`, the SMP channel and the upload session.
///
/// ```swift
/// var flow = McuMgrUpgrade(image: McuMgrUpgradeImage(bytes: file, hash: tlvHash, fileSHA256: sha),
///                          options: McuMgrUpgradeOptions(mode: .testAndConfirm))
/// let actions = flow.handle(.start(connection), now: .zero)
/// ```
public struct McuMgrUpgrade: FlowMachine {
    public typealias Output = McuMgrResult
    public typealias Report = McuMgrReport

    enum Command: Equatable, Sendable {
        case params, stateRead, test, confirm(hash: [UInt8]?), reset
        var name: String {
            switch self {
            case .params: return MCUmgrParametersRequest.name
            case .stateRead: return ImageStateReadRequest.name
            case .test: return "image test (state write)"
            case .confirm: return "image confirm (state write)"
            case .reset: return ResetRequest.name
            }
        }
    }

    static let requestTimer = TimerID("request")
    static let busyTimer = TimerID("busy")
    static let resetTimer = TimerID("reset")

    public let image: McuMgrUpgradeImage
    public let options: McuMgrUpgradeOptions
    public private(set) var outcome: Result<McuMgrResult, any Error>?

    /// Where the upgrade stands, with its data (`McuMgrUpgrade+State`).
    var state = State.idle
    var link = LinkState.down
    var channel = SMPChannel(mtu: 23, version: .v2, traceBytes: 0)
    var session: UploadSession
    /// Upload requests in flight at most (the device's buffers, or 1).
    var depth = 1
    var result = McuMgrResult()
    var budget = Budget()
    var board = BoardRecord()

    public init(image: McuMgrUpgradeImage, options: McuMgrUpgradeOptions = McuMgrUpgradeOptions()) {
        self.image = image
        self.options = options
        self.session = UploadSession(image: image)
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard !state.isFinished else { return [] }
        if !state.isReadingBack, let started = budget.startedAt, now - started > options.maximumDuration {
            return fail(.timeLimitReached(options.maximumDuration, offset: session.deviceOffset, total: session.total))
        }
        switch event {
        case let .start(info):
            return start(info, now: now)
        case let .notification(characteristic, bytes):
            guard characteristic == SMPGATT.characteristic else { return [] }
            // The link is down: whatever still arrives belongs to the old connection, and acting
            // on it would write to a link that is not there (the reassembly starts afresh on the new one).
            guard !link.isReconnecting else {
                return [Self.report(.ignoredLateNotification)]
            }
            return received(bytes, now: now)
        case let .timerFired(id):
            return timerFired(id, now: now)
        case let .disconnected(reason):
            return disconnected(reason, now: now)
        case let .connected(info):
            return connected(info)
        case let .connectFailed(error):
            return connectFailed(error)
        case let .writeFailed(_, error):
            // The request timer notices the missing answer and retries.
            return [Self.report(.writeFailed(error))]
        }
    }

    private mutating func start(_ info: ConnectionInfo, now: Duration) -> [FlowAction] {
        guard state.isIdle else { return [] }
        budget.startedAt = now
        if let problem = options.problem { return fail(.invalidInput(problem)) }
        if image.bytes.count < 32 {
            return fail(.invalidInput("the image has \(image.bytes.count) bytes, fewer than an MCUboot header"))
        }
        if image.bytes.count > Int(UInt32.max) { return fail(.invalidInput("the image is larger than 4 GiB")) }
        if image.hash.count != 32 || image.fileSHA256.count != 32 {
            return fail(.invalidInput("the image hash and the file SHA-256 must be 32 bytes each"))
        }
        // The image is checked here, before anything goes to the board.
        if let problem = image.problem(slot: options.slotSize) { return fail(.invalidImage(problem)) }
        guard info.services.contains(SMPGATT.service) else { return fail(.smpServiceMissing) }
        channel = SMPChannel(mtu: info.mtu, version: options.smpVersion, traceBytes: options.traceBytes)
        link = .up
        return [.subscribe(SMPGATT.characteristic)] + begin(.params)
    }

    /// Moves to `step` and sends its request.
    mutating func begin(_ step: Step) -> [FlowAction] {
        switch step {
        case .params: return send(.params, attempts: 0, for: .step(.params))
        case .validate: return send(.stateRead, attempts: 0, for: .step(.validate))
        case .verify: return [.report(.phase(.verify))] + send(.stateRead, attempts: 0, for: .step(.verify))
        case .test: return [.report(.phase(.test))] + send(.test, attempts: 0, for: .step(.test))
        case .confirm:
            return [.report(.phase(.confirm))] + send(.confirm(hash: image.hash), attempts: 0, for: .step(.confirm))
        case .recoverConfirm:
            return []  // its confirm names the image to keep (`validated`)
        }
    }

    /// Resets the device; `then` is the step once it is back.
    mutating func beginReset(then next: Step) -> [FlowAction] {
        [.report(.phase(.reset))] + send(.reset, attempts: 0, for: .reset(then: next))
    }

    mutating func beginUpload() -> [FlowAction] {
        state = .uploading
        return [
            .report(.phase(.upload)), .report(.progress(done: session.deviceOffset, total: session.total, unit: .bytes))
        ]
            + pumpUpload()
    }

    /// Continues after validation or an upload by the decided step.
    mutating func proceed(_ step: ValidateDecision.NextStep) -> [FlowAction] {
        switch step {
        case .test: return begin(.test)
        case .confirm: return begin(.confirm)
        case .reset: return beginReset(then: options.mode == .testAndConfirm ? .confirm : .verify)
        case .confirmAfterSwap:
            board.swapped = true
            return begin(.confirm)
        }
    }

    mutating func succeed(_ slots: [ImageSlotState]) -> [FlowAction] {
        result.finalSlots = slots
        result.bytesSent = session.bytesSent
        result.chunks = session.chunksSent
        result.resentBytes = session.resentBytes
        result.writes = channel.writes
        result.largestWrite = channel.largestWrite
        result.largestFrame = channel.largestFrame
        state = .finished
        outcome = .success(result)
        return stopTimers() + [.report(.phase(.done)), .finish]
    }

    /// Ends the upgrade with `error`, after reading the board's slots back when something that
    /// changes the board was sent since they were last read and the link is up.
    mutating func fail(_ error: McuMgrError) -> [FlowAction] {
        if case let .readingBack(readBack) = state {
            // The read-back itself failed.
            return finish(readBack.cause, .notRead(Self.readBackProblem(error)))
        }
        if !board.sentChanges {
            if let slots = board.lastSlots { return finish(error, .lastRead, slots) }
            return finish(error, .notRead("nothing that changes the board was sent before the failure"))
        }
        if !board.changedSinceLastRead, let slots = board.lastSlots { return finish(error, .lastRead, slots) }
        guard !state.isIdle, link == .up else {
            return finish(error, .notRead("the link to the board is down"))
        }
        return stopTimers() + [Self.report(.readingBack)]
            + send(.stateRead, attempts: 0, for: .readBack(cause: error))
    }

    /// The read-back answered (or could not be made): the upgrade ends with the failure.
    mutating func finish(_ error: McuMgrError, _ source: McuMgrBoardState.Source, _ slots: [ImageSlotState] = [])
        -> [FlowAction]
    {
        let found = McuMgrBoardState(
            source: source, slots: slots, newImageHash: image.hash, imageBytes: image.bytes.count,
            uploadedBytes: session.chunksSent > 0 ? session.deviceOffset : nil)
        state = .finished
        outcome = .failure(McuMgrFailure(cause: error, board: found))
        return stopTimers() + [.finish]
    }

    /// Why the read-back failed, in a few words.
    static func readBackProblem(_ error: McuMgrError) -> String {
        switch error {
        case .noResponse, .tooManyRetries: return "the board did not answer the image state read"
        case .reconnectFailed, .tooManyDisconnects: return "the link dropped"
        case let .deviceRefused(_, refusal):
            return "the board refused the image state read: \(McuMgrError.describe(refusal))"
        default: return "\(error)"
        }
    }

    private func stopTimers() -> [FlowAction] {
        [.cancelTimer(Self.requestTimer), .cancelTimer(Self.busyTimer), .cancelTimer(Self.resetTimer)]
    }

    /// Counts one retry against the run's budget; nil when it is spent.
    mutating func countRetry(_ retry: McuMgrReport) -> [FlowAction]? {
        result.retries += 1
        guard result.retries <= options.maximumRetriesPerRun else { return nil }
        return [Self.report(retry)]
    }
}
