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
            actions += sent.actions
        }
        if wasIdle, let head = session.inFlight.first {
            actions.append(.startTimer(Self.requestTimer, timeout(for: head)))
        }
        return actions
    }

    private func timeout(for chunk: UploadSession.Chunk) -> Duration {
        chunk.carriesSessionFields ? options.firstChunkTimeout : options.requestTimeout
    }

    /// Handles an answer during the upload.
    mutating func uploadAnswered(_ frame: SMPFrame) -> [FlowAction] {
        guard frame.header.operation.isResponse, session.inFlight.contains(where: { $0.sequence == frame.header.sequence }) else {
            return []
        }
        let response: ImageUploadResponse
        do {
            response = try frame.response(as: ImageUploadResponse.self)
        } catch {
            if let refusal = try? frame.errorResponse() {
                if case .returnCode(.busy, _) = refusal { return uploadRetry("device busy", after: options.busyRetryDelay) }
                return fail(.deviceRefused(command: ImageUploadRequest.name, refusal))
            }
            return fail(.malformedResponse(command: ImageUploadRequest.name, error))
        }
        guard let offset = response.offset, offset <= session.total else {
            return fail(.malformedResponse(command: ImageUploadRequest.name,
                                           .invalidField("off", expected: "an offset within the image", in: "image upload response")))
        }
        switch session.answered(sequence: frame.header.sequence, offset: offset) {
        case .stale:
            return []
        case .complete:
            if response.match == false {
                guard uploadRestarts < options.maximumUploadRestarts else { return fail(.uploadMismatch) }
                uploadRestarts += 1
                session.restartFromScratch()
                guard let report = countRetry("the device's copy does not match the file; uploading again") else {
                    return fail(.tooManyRetries(result.retries - 1))
                }
                return report + [.cancelTimer(Self.requestTimer)] + pumpUpload()
            }
            return [.cancelTimer(Self.requestTimer), .report(.progress(done: offset, total: session.total, unit: .bytes))]
                + proceed(ValidateDecision.afterUpload(options.mode))
        case .progress:
            return restartTimer() + [.report(.progress(done: offset, total: session.total, unit: .bytes))] + pumpUpload()
        case .resynchronising:
            var actions = restartTimer()
            if session.inFlight.isEmpty {
                // Every answer is in: continue from the device's offset.
                let restarts = session.restartsAtOffset[offset, default: 0]
                guard restarts <= options.maximumRetriesPerRequest else {
                    return fail(.uploadStalled(offset: offset, attempts: restarts))
                }
                guard let report = countRetry("device expects offset \(offset); resending from there") else {
                    return fail(.tooManyRetries(result.retries - 1))
                }
                actions += report + pumpUpload()
            }
            return actions
        }
    }

    private func restartTimer() -> [FlowAction] {
        guard let head = session.inFlight.first else { return [.cancelTimer(Self.requestTimer)] }
        return [.startTimer(Self.requestTimer, timeout(for: head))]
    }

    /// Gives up on the chunks in flight and sends again from the device's offset.
    mutating func uploadRetry(_ why: String, timedOut: Bool = false, after delay: Duration? = nil) -> [FlowAction] {
        session.abandonInFlight()
        let offset = session.deviceOffset
        let restarts = session.restartsAtOffset[offset, default: 0]
        guard restarts <= options.maximumRetriesPerRequest else {
            if timedOut {
                return fail(.noResponse(command: ImageUploadRequest.name, attempts: restarts, timeout: options.requestTimeout))
            }
            return fail(.uploadStalled(offset: offset, attempts: restarts))
        }
        guard let report = countRetry("image upload at offset \(offset): \(why)") else {
            return fail(.tooManyRetries(result.retries - 1))
        }
        if let delay { return report + [.cancelTimer(Self.requestTimer), .startTimer(Self.busyTimer, delay)] }
        return report + [.cancelTimer(Self.requestTimer)] + pumpUpload()
    }
}
