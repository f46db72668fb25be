import SMP
import Transport

/// The upload stage: pipelined chunks and the device's offsets.
extension McuMgrUpgrade {
    /// The frame limit of upload requests.
    var uploadLimit: SMPFrameLimit {
        channel.reassembly ? .reassemblyBuffer(channel.frameLimit) : .attMTU(min(channel.mtu, channel.frameLimit + 3))
    }

    /// Sends chunks until the pipeline is full (or the session waits for an answer).
    mutating func pumpUpload() -> [FlowAction] {
        var actions: [FlowAction] = []
        let wasIdle = session.inFlight.isEmpty
        while session.canSend(depth: depth) {
            let request: ImageUploadRequest
            do {
                request = try session.nextRequest(limit: uploadLimit, alignment: options.byteAlignment)
            } catch {
                return actions + fail(.uploadFrameTooSmall(limit: uploadLimit.maximumFrameSize))
            }
            let sent: (sequence: UInt8, actions: [FlowAction])
            do {
                sent = try channel.send(request)
            } catch {
                return actions + fail(error)
            }
            session.sent(request, sequence: sent.sequence)
            board.changed()
            actions += sent.actions
        }
        if wasIdle, let head = session.inFlight.first {
            actions.append(.startTimer(Self.requestTimer, timeout(for: head)))
        }
        return actions
    }

    /// The device erases (part of) its slot before it answers the chunk at offset 0 only.
    private func timeout(for chunk: UploadSession.Chunk) -> Duration {
        chunk.offset == 0 ? options.firstChunkTimeout : options.requestTimeout
    }

    /// Makes every upload frame fit one write, after the link lost writes: a frame cut across
    /// writes is lost whenever one of its writes is, so at 5 % lost writes an eleven-write frame
    /// gets through little more than half the time, and a one-write frame 95 % of the time.
    /// Returns the note, or nothing when frames already fit one write (or a first chunk would not).
    mutating func fitFramesToOneWrite(_ sign: McuMgrWriteLossSign) -> [FlowAction] {
        guard channel.reassembly, channel.frameLimit > channel.writeSize else { return [] }
        let before = channel
        channel.reassembly = false
        channel.frameLimit = channel.writeSize
        guard firstChunkFits else {
            channel = before
            return []
        }
        result.frameLimit = channel.frameLimit
        return [Self.report(.framesFitOneWrite(cause: sign, writeSize: channel.writeSize))]
    }

    /// Handles an answer during the upload.
    mutating func uploadAnswered(_ frame: SMPFrame) -> [FlowAction] {
        guard frame.header.operation.isResponse,
            session.inFlight.contains(where: { $0.sequence == frame.header.sequence })
        else {
            return []
        }
        let response: ImageUploadResponse
        do {
            response = try frame.response(as: ImageUploadResponse.self)
        } catch {
            if let refusal = try? frame.errorResponse() {
                if case .returnCode(.busy, _) = refusal {
                    return uploadRetry(.busy, after: options.busyRetryDelay)
                }
                return fail(.deviceRefused(command: ImageUploadRequest.name, refusal))
            }
            return fail(.malformedResponse(command: ImageUploadRequest.name, error))
        }
        guard let offset = response.offset, offset <= session.total else {
            return fail(
                .malformedResponse(
                    command: ImageUploadRequest.name,
                    .invalidField("off", expected: "an offset within the image", in: "image upload response")))
        }
        // The device lacks bytes this chunk was sent after: a write was lost on the way.
        let lacking =
            session.inFlight.first { $0.sequence == frame.header.sequence }.map { offset < $0.offset + $0.length }
            ?? false
        let answer = session.answered(sequence: frame.header.sequence, offset: offset)
        if answer != .stale, session.advanced { budget.disconnectsWithoutProgress = 0 }
        switch answer {
        case .stale:
            return []
        case .complete:
            if response.match == false {
                guard budget.uploadRestarts < options.maximumUploadRestarts else { return fail(.uploadMismatch) }
                budget.uploadRestarts += 1
                session.restartFromScratch()
                guard let report = countRetry(.uploadMismatch) else {
                    return fail(.tooManyRetries(result.retries - 1))
                }
                return report + [.cancelTimer(Self.requestTimer)] + pumpUpload()
            }
            return [
                .cancelTimer(Self.requestTimer), .report(.progress(done: offset, total: session.total, unit: .bytes))
            ]
                + proceed(ValidateDecision.afterUpload(options.mode))
        case .progress:
            return restartTimer() + [.report(.progress(done: offset, total: session.total, unit: .bytes))]
                + pumpUpload()
        case .resynchronising:
            var actions = restartTimer()
            if lacking { actions += fitFramesToOneWrite(.deviceExpects(offset: offset)) }
            if session.inFlight.isEmpty {
                // Every answer is in: continue from the device's offset. When the device is
                // ahead of the chunks (it had them already), that is no setback.
                guard lacking else { return actions + pumpUpload() }
                switch chargeUploadRetry(.offsetMismatch(expected: offset), timedOut: false) {
                case let .stop(failure): return failure
                case let .go(report): actions += report + pumpUpload()
                }
            }
            return actions
        }
    }

    /// Whether a setback of the upload may be retried.
    enum Charge {
        /// Retry, after these reports.
        case go([FlowAction])
        /// The budget is spent; the upgrade has failed with these actions.
        case stop([FlowAction])
    }

    /// Charges one upload retry to the progress budget (retries since the device last took new
    /// bytes) and to the run's ceiling.
    mutating func chargeUploadRetry(_ retry: McuMgrReport, timedOut: Bool) -> Charge {
        let offset = session.deviceOffset
        guard session.retriesWithoutProgress < options.maximumRetriesWithoutProgress else {
            let attempts = session.retriesWithoutProgress + 1
            if timedOut {
                return .stop(
                    fail(
                        .noResponse(
                            command: ImageUploadRequest.name, attempts: attempts, timeout: options.requestTimeout)))
            }
            return .stop(fail(.uploadStalled(offset: offset, total: session.total, attempts: attempts)))
        }
        session.retried()
        result.mostRetriesWithoutProgress = max(result.mostRetriesWithoutProgress, session.retriesWithoutProgress)
        guard let report = countRetry(retry) else { return .stop(fail(.tooManyRetries(result.retries - 1))) }
        return .go(report)
    }

    /// The request timer for the chunks in flight. Once the device has said where to continue,
    /// it drops the chunks still in flight and answers each at once; their answers are awaited
    /// `resyncWait` at most (a lost one would otherwise cost a whole request timeout).
    private func restartTimer() -> [FlowAction] {
        guard let head = session.inFlight.first else { return [.cancelTimer(Self.requestTimer)] }
        let wait = session.resynchronising ? min(options.resyncWait, timeout(for: head)) : timeout(for: head)
        return [.startTimer(Self.requestTimer, wait)]
    }

    /// The answers of the chunks sent after the one the device lacks did not all come: send
    /// again from the device's offset (the retry the resynchronisation would have charged).
    mutating func resyncWaitOver() -> [FlowAction] {
        session.abandonInFlight()
        switch chargeUploadRetry(.offsetMismatch(expected: session.deviceOffset), timedOut: false) {
        case let .stop(failure): return failure
        case let .go(report): return report + [.cancelTimer(Self.requestTimer)] + pumpUpload()
        }
    }

    /// Gives up on the chunks in flight and sends again from the device's offset.
    mutating func uploadRetry(_ cause: McuMgrRetryCause, timedOut: Bool = false, after delay: Duration? = nil)
        -> [FlowAction]
    {
        session.abandonInFlight()
        let report: [FlowAction]
        switch chargeUploadRetry(.uploadRetried(offset: session.deviceOffset, cause: cause), timedOut: timedOut) {
        case let .stop(failure): return failure
        case let .go(reports): report = reports
        }
        if let delay { return report + [.cancelTimer(Self.requestTimer), .startTimer(Self.busyTimer, delay)] }
        return report + [.cancelTimer(Self.requestTimer)] + pumpUpload()
    }
}
