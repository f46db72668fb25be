import Diagnostics
import SMP
import Transport

/// Single requests (params, state read/write, reset) and their answers.
extension McuMgrUpgrade {
    /// Sends `command` (a new sequence number each time) and starts its timer.
    mutating func send(_ command: Command, attempts: Int) -> [FlowAction] {
        do {
            let sent: (sequence: UInt8, actions: [FlowAction])
            switch command {
            case .params: sent = try channel.send(MCUmgrParametersRequest())
            case .stateRead: sent = try channel.send(ImageStateReadRequest())
            case .test: sent = try channel.send(ImageStateWriteRequest.test(hash: image.hash))
            case let .confirm(hash): sent = try channel.send(ImageStateWriteRequest.confirm(hash: hash))
            case .reset: sent = try channel.send(ResetRequest())
            }
            pending = Pending(command: command, sequence: sent.sequence, attempts: attempts)
            switch command {
            case .test, .confirm, .reset:
                sentChanges = true
                changedSinceLastRead = true
            case .params, .stateRead:
                break
            }
            return sent.actions + [.startTimer(Self.requestTimer, options.requestTimeout)]
        } catch {
            return fail(error)
        }
    }

    /// Sends the pending command again, within the retry limits.
    mutating func retryPending(_ why: String, after delay: Duration? = nil) -> [FlowAction] {
        guard let p = pending else { return [] }
        let attempts = p.attempts + 1
        guard attempts <= options.maximumRetriesPerRequest else {
            if p.command == .params { return paramsUnavailable("no answer") }
            return fail(.noResponse(command: p.command.name, attempts: attempts, timeout: options.requestTimeout))
        }
        guard let report = countRetry("\(p.command.name): \(why), attempt \(attempts + 1)") else {
            return fail(.tooManyRetries(result.retries - 1))
        }
        if let delay {
            pending?.attempts = attempts
            return report + [.cancelTimer(Self.requestTimer), .startTimer(Self.busyTimer, delay)]
        }
        return report + send(p.command, attempts: attempts)
    }

    /// Feeds a notification and handles every frame it completes.
    mutating func received(_ bytes: [UInt8], now: Duration) -> [FlowAction] {
        let (frames, failure, traces) = channel.receive(bytes)
        if !frames.isEmpty {
            consecutiveTimeouts = 0
            silentUploadTimeouts = 0
        }
        var actions = traces
        for frame in frames where stage != .finished {
            actions += stage == .upload ? uploadAnswered(frame) : answered(frame, now: now)
        }
        if let failure, stage != .finished {
            // A garbled notification: the request timer will ask again.
            actions.append(.report(.trace("dropped an unreadable notification: \(failure)")))
        }
        return actions
    }

    /// The answer to the pending single request.
    private mutating func answered(_ frame: SMPFrame, now: Duration) -> [FlowAction] {
        guard let p = pending, frame.header.sequence == p.sequence, frame.header.operation.isResponse else { return [] }
        let command = p.command
        if command != .params, case .returnCode(.busy, _)? = try? frame.errorResponse() {
            return retryPending("device busy", after: options.busyRetryDelay)
        }
        pending = nil
        disconnectsWithoutProgress = 0
        let stop: [FlowAction] = [.cancelTimer(Self.requestTimer)]
        do throws(SMPError) {
            switch command {
            case .params:
                guard (try? frame.errorResponse()) == nil,
                    let params = try? frame.response(as: MCUmgrParametersResponse.self)
                else {
                    return stop + paramsUnavailable("the device does not report them")
                }
                return stop + paramsKnown(params)
            case .stateRead:
                let state = try frame.response(as: ImageStateResponse.self)
                slotsRead(state.images)
                if stage == .readBack, let cause = failure {
                    return stop + finish(cause, .readAfterFailure, state.images)
                }
                return stop + (stage == .verify ? verified(state.images) : validated(state.images))
            case .test, .confirm:
                let state = try frame.response(as: ImageStateResponse.self)
                slotsRead(state.images)
                return stop + stateWritten(command, slots: state.images)
            case .reset:
                _ = try frame.response(as: ResetResponse.self)
                resetAnsweredAt = now
                return stop + [.startTimer(Self.resetTimer, options.resetDisconnectTimeout)]
            }
        } catch {
            if let refusal = try? frame.errorResponse() {
                // Confirming after the reset is refused while the image still waits for its test boot
                // (Zephyr's `img_mgmt_set_next_boot_slot`, type TEST): the device did not reset.
                if case .confirm = command, stage == .confirm, swapped, Self.isAlreadyPending(refusal),
                    let again = resetAgain(stillPending: true)
                {
                    return again
                }
                // A test sent again (its answer lost) after the device reset and swapped: the image
                // already runs, and Zephyr refuses to test the active slot. Go on as after the swap.
                if command == .test, stage == .test, refusal == .group(.image(.imageSettingTestToActiveDenied)) {
                    swapped = true
                    return [.report(.note("the device already runs the image (it reset after the test was set)"))]
                        + (options.mode == .testAndConfirm ? begin(.confirm) : begin(.verify))
                }
                return fail(.deviceRefused(command: command.name, refusal))
            }
            return fail(.malformedResponse(command: command.name, error))
        }
    }

    /// The device reported its slots: the board as it stands now.
    private mutating func slotsRead(_ slots: [ImageSlotState]) {
        lastSlots = slots
        changedSinceLastRead = false
    }

    private mutating func paramsUnavailable(_ why: String) -> [FlowAction] {
        pending = nil
        depth = 1
        result.pipelineDepth = 1
        channel.reassembly = false
        channel.frameLimit = channel.writeSize
        result.frameLimit = channel.frameLimit
        return [
            .cancelTimer(Self.requestTimer),
            .report(.note("McuMgr parameters unavailable (\(why)): one frame per write, no pipelining"))
        ] + begin(.validate)
    }

    private mutating func paramsKnown(_ params: MCUmgrParametersResponse) -> [FlowAction] {
        let bufferSize = min(max(params.bufferSize, 0), Int(UInt16.max))
        let count = max(params.bufferCount, 1)
        if options.useReassembly, bufferSize > 0 {
            channel.reassembly = true
            channel.frameLimit = bufferSize
        } else {
            channel.reassembly = false
            channel.frameLimit = bufferSize > 0 ? min(channel.writeSize, bufferSize) : channel.writeSize
        }
        depth = max(1, min(options.pipelineDepth ?? (count - 1), count))
        result.pipelineDepth = depth
        result.frameLimit = channel.frameLimit
        let note =
            "device buffers: \(params.bufferCount) × \(params.bufferSize) bytes; frames up to \(channel.frameLimit) bytes, \(depth) in flight"
        return [.report(.note(note))] + begin(.validate)
    }

    private mutating func validated(_ slots: [ImageSlotState]) -> [FlowAction] {
        switch ValidateDecision.decide(slots: slots, image: image, mode: options.mode) {
        case .alreadyInstalled:
            result.uploadSkipped = true
            result.alreadyInstalled = true
            return [.report(.note("the device already runs this image"))] + succeed(slots)
        case .upload:
            return begin(.upload)
        case let .skipUpload(step):
            result.uploadSkipped = true
            return [.report(.note("the device already holds this image; skipping the upload"))] + proceed(step)
        case let .confirmPrimary(hash):
            guard let more = recover() else { return fail(.secondarySlotBusy(attempts: recoveries - 1)) }
            stage = .recoverConfirm
            return more + send(.confirm(hash: hash), attempts: 0)
        case .resetForPendingImage:
            guard let more = recover() else { return fail(.secondarySlotBusy(attempts: recoveries - 1)) }
            afterReset = .validate
            return more + begin(.reset)
        case let .fail(error):
            return fail(error)
        }
    }

    private mutating func recover() -> [FlowAction]? {
        recoveries += 1
        guard recoveries <= 2 else { return nil }
        return [.report(.note("the secondary slot holds another image; clearing it first"))]
    }

    private mutating func stateWritten(_ command: Command, slots: [ImageSlotState]) -> [FlowAction] {
        if stage == .recoverConfirm { return begin(.validate) }
        let ours = slots.filter { ($0.image ?? 0) == image.imageNumber && $0.hash == image.hash }
        switch stage {
        case .test:
            guard ours.contains(where: { $0.pending }) else {
                return fail(.stateNotAccepted(command: command.name, expected: "pending (test)"))
            }
            return proceed(.reset)
        case .confirm where swapped:
            guard ours.contains(where: { $0.confirmed }) else {
                if let again = resetAgain(ours) { return again }
                return fail(.stateNotAccepted(command: command.name, expected: "confirmed"))
            }
            return begin(.verify)
        case .confirm:
            guard ours.contains(where: { $0.permanent || ($0.active && $0.confirmed) }) else {
                return fail(
                    .stateNotAccepted(command: command.name, expected: "permanent (confirmed for the next boot)"))
            }
            afterReset = .verify
            return begin(.reset)
        default:
            return []
        }
    }

    /// The image still waits in slot 1 after the reconnect: the reset request was lost and the
    /// device never swapped. Resets again (at most twice); nil when that does not apply.
    private mutating func resetAgain(_ ours: [ImageSlotState]) -> [FlowAction]? {
        resetAgain(stillPending: ours.contains(where: { $0.slot == 1 && ($0.pending || $0.permanent) }))
    }

    private mutating func resetAgain(stillPending: Bool) -> [FlowAction]? {
        guard options.mode != .uploadOnly, stillPending, resetRepeats < 2 else { return nil }
        resetRepeats += 1
        guard let report = countRetry("the device still holds the image in slot 1: it did not reset; resetting again")
        else {
            return fail(.tooManyRetries(result.retries - 1))
        }
        // A tested image still has to be confirmed once it runs.
        afterReset = options.mode == .testAndConfirm && stage == .confirm ? .confirm : .verify
        return report + begin(.reset)
    }

    /// IMAGE_ALREADY_PENDING, in either SMP form (v1 translates it to EBADSTATE).
    static func isAlreadyPending(_ refusal: SMPErrorResponse) -> Bool {
        switch refusal {
        case .group(.image(.imageAlreadyPending)), .returnCode(.badState, _): return true
        default: return false
        }
    }

    private mutating func verified(_ slots: [ImageSlotState]) -> [FlowAction] {
        if !ValidateDecision.verify(slots: slots, image: image, mode: options.mode),
            let again = resetAgain(slots.filter { ($0.image ?? 0) == image.imageNumber && $0.hash == image.hash })
        {
            return again
        }
        guard ValidateDecision.verify(slots: slots, image: image, mode: options.mode) else {
            return fail(.verificationFailed(expected: Self.shortHash(image.hash), slots: slots))
        }
        return succeed(slots)
    }

    static func shortHash(_ hash: [UInt8]) -> String {
        Hex.bytes(hash.prefix(8), uppercase: false) + "…"
    }
}
