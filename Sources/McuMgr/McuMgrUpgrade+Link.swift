import SMP
import Transport

/// Timers, disconnects and reconnects.
extension McuMgrUpgrade {
    mutating func timerFired(_ id: TimerID, now: Duration) -> [FlowAction] {
        switch id {
        case Self.requestTimer:
            guard !link.isReconnecting else { return [] }
            return requestTimedOut()
        case Self.busyTimer:
            guard !link.isReconnecting else { return [] }
            if state.isUploading { return pumpUpload() }
            guard let p = state.pending, let purpose = state.purpose else { return [] }
            return send(p.command, attempts: p.attempts, for: purpose)
        case Self.resetTimer:
            // The device answered the reset but kept the link: close it ourselves.
            return [Self.report(.linkKeptAfterReset), .disconnect]
        default:
            return []
        }
    }

    /// The answer to the pending request (or to the upload chunks in flight) did not come.
    ///
    /// After `reconnectAfterTimeouts` timeouts in a row without any answer, or in the upload
    /// without the device taking new bytes, the link is closed and opened again: Zephyr drops
    /// a half-received frame when the link drops, and such a frame may be blocking its
    /// reassembly. In the upload, frames are first made to fit one write each (a frame over
    /// several writes is lost with any of them); only when the upload stays unanswered twice
    /// as long after that are the writes made shorter.
    private mutating func requestTimedOut() -> [FlowAction] {
        if state.isReadingBack {
            return fail(.noResponse(command: ImageStateReadRequest.name, attempts: 1, timeout: options.requestTimeout))
        }
        let inUpload = state.isUploading
        if inUpload, session.resynchronising, !session.inFlight.isEmpty { return resyncWaitOver() }
        budget.consecutiveTimeouts += 1
        let uploading = inUpload && !session.inFlight.isEmpty
        if uploading { budget.silentUploadTimeouts += 1 }
        let n = options.reconnectAfterTimeouts
        let stalled = uploading ? session.timedOut() : 0
        if n > 0, !state.isResetting, budget.consecutiveTimeouts >= n || stalled >= n {
            let silent = budget.consecutiveTimeouts >= n
            budget.consecutiveTimeouts = 0
            session.forgetTimeouts()
            var actions: [FlowAction] = [Self.report(.silentLink(timeouts: n, tookNoBytes: !silent))]
            if inUpload {
                let fitted = fitFramesToOneWrite(.uploadUnanswered)
                actions += fitted.isEmpty && budget.silentUploadTimeouts >= 2 * n ? shrinkUploadWrites() : fitted
            }
            return actions + [.disconnect]
        }
        if inUpload {
            guard !session.inFlight.isEmpty else { return [] }
            // An unanswered chunk: a write of it (or its answer) was lost.
            let fitted = fitFramesToOneWrite(.chunkUnanswered)
            return fitted + uploadRetry(.noAnswer, timedOut: true)
        }
        return retryPending(.noAnswerWithin(options.requestTimeout))
    }

    /// The upload went unanswered several times in a row on a link that stays up: some links
    /// (adapters, controllers) drop long write commands without an error, so the writes are
    /// made shorter (halved each time, down to 20 bytes) and one frame goes at a time.
    mutating func shrinkUploadWrites() -> [FlowAction] {
        let before = channel
        budget.silentUploadTimeouts = 0
        guard channel.shrinkWrites() else { return [] }
        // Without reassembly a frame is one write: it must still hold a first chunk (the
        // session fields and the image's 32-byte header), or the writes keep their size.
        if !channel.reassembly, !firstChunkFits {
            channel = before
            return []
        }
        depth = 1
        result.pipelineDepth = 1
        result.frameLimit = channel.frameLimit
        return [
            Self.report(.writesShortened(timeouts: 2 * options.reconnectAfterTimeouts, writeSize: channel.writeSize))
        ]
    }

    /// Whether an upload's first chunk (with the session fields) fits in the current frames.
    var firstChunkFits: Bool {
        var first = ImageUploadRequest(offset: 0, data: [])
        first.length = image.bytes.count
        first.sha = image.fileSHA256
        first.image = image.imageNumber > 0 ? image.imageNumber : nil
        let room =
            (try? UploadChunking.maximumDataLength(
                fitting: uploadLimit, template: first, alignment: options.byteAlignment)) ?? 0
        return room >= min(32, image.bytes.count)
    }

    mutating func disconnected(_ reason: DisconnectReason, now: Duration) -> [FlowAction] {
        guard !link.isReconnecting, !state.isIdle else { return [] }
        link = .down
        if state.isReadingBack { return fail(.tooManyDisconnects(budget.disconnects)) }
        let stop: [FlowAction] = [
            .cancelTimer(Self.requestTimer), .cancelTimer(Self.busyTimer), .cancelTimer(Self.resetTimer)
        ]
        if case var .resetting(reset) = state {
            // The expected drop: the device resets and MCUboot swaps the slots.
            var elapsed = Duration.zero
            if case let .answered(at) = reset.phase { elapsed = now - at }
            let wait = max(.zero, options.estimatedSwapTime - elapsed)
            reset.phase = .restarting
            state = .resetting(reset)
            link = .reconnecting(failures: 0)
            return stop + [
                Self.report(.resetting(reconnectIn: wait)), .connect(after: wait)
            ]
        }
        budget.disconnects += 1
        budget.disconnectsWithoutProgress += 1
        guard budget.disconnects <= options.maximumDisconnectsPerRun,
            budget.disconnectsWithoutProgress <= options.maximumDisconnects
        else {
            return stop + fail(.tooManyDisconnects(budget.disconnects))
        }
        if state.isUploading { session.disconnected() }
        link = .reconnecting(failures: 0)
        return stop + [Self.report(.linkLost(reason)), .connect(after: options.reconnectDelay)]
    }

    mutating func connected(_ info: ConnectionInfo) -> [FlowAction] {
        guard link.isReconnecting else { return [] }
        link = .up
        guard info.services.contains(SMPGATT.service) else { return fail(.smpServiceMissing) }
        channel.reconnected(mtu: info.mtu)
        var actions: [FlowAction] = [.subscribe(SMPGATT.characteristic)]
        if case let .resetting(reset) = state {
            if reset.then != .validate { board.swapped = true }
            return actions + begin(reset.then)
        }
        if state.isUploading {
            result.resumes += 1
            actions.append(Self.report(.resumingUpload(offset: session.deviceOffset)))
            return actions + pumpUpload()
        }
        guard let p = state.pending, let purpose = state.purpose else { return actions }
        guard let report = countRetry(.requestResent(command: p.command.name)) else {
            return fail(.tooManyRetries(result.retries - 1))
        }
        return actions + report + send(p.command, attempts: p.attempts, for: purpose)
    }

    mutating func connectFailed(_ error: TransportError) -> [FlowAction] {
        guard case let .reconnecting(failures) = link else { return [] }
        let attempts = failures + 1
        guard attempts < options.reconnectAttempts else {
            link = .down
            return fail(.reconnectFailed(attempts: attempts, last: error))
        }
        link = .reconnecting(failures: attempts)
        return [
            Self.report(.connectAttemptFailed(attempt: attempts, error: error)),
            .connect(after: options.reconnectDelay)
        ]
    }
}
