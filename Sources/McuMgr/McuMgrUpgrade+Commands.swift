import Diagnostics
import SMP
import Transport

/// Single requests (params, state read/write, reset) and their answers.
extension McuMgrUpgrade {
    /// What a single request serves: the state it puts the upgrade in.
    enum Purpose {
        case step(Step)
        case reset(then: Step)
        case readBack(cause: McuMgrError)

        func state(awaiting pending: Pending) -> State {
            switch self {
            case let .step(step): return .requesting(step, pending)
            case let .reset(next): return .resetting(Reset(then: next, phase: .requested(pending)))
            case let .readBack(cause): return .readingBack(ReadBack(cause: cause, pending: pending))
            }
        }
    }

    /// Sends `command` (a new sequence number each time) for `purpose` and starts its timer.
    mutating func send(_ command: Command, attempts: Int, for purpose: Purpose) -> [FlowAction] {
        do {
            let sent: (sequence: UInt8, actions: [FlowAction])
            switch command {
            case .params: sent = try channel.send(MCUmgrParametersRequest())
            case .stateRead: sent = try channel.send(ImageStateReadRequest())
            case .test: sent = try channel.send(ImageStateWriteRequest.test(hash: image.hash))
            case let .confirm(hash): sent = try channel.send(ImageStateWriteRequest.confirm(hash: hash))
            case .reset: sent = try channel.send(ResetRequest())
            }
            state = purpose.state(awaiting: Pending(command: command, sequence: sent.sequence, attempts: attempts))
            switch command {
            case .test, .confirm, .reset: board.changed()
            case .params, .stateRead: break
            }
            return sent.actions + [.startTimer(Self.requestTimer, options.requestTimeout)]
        } catch {
            // The read-back itself could not be sent: the upgrade ends with the failure it reports.
            if case let .readBack(cause) = purpose { return finish(cause, .notRead(Self.readBackProblem(error))) }
            return fail(error)
        }
    }

    /// Sends the pending command again, within the retry limits.
    mutating func retryPending(_ cause: McuMgrRetryCause, after delay: Duration? = nil) -> [FlowAction] {
        guard let p = state.pending, let purpose = state.purpose else { return [] }
        let attempts = p.attempts + 1
        guard attempts <= options.maximumRetriesPerRequest else {
            if p.command == .params { return paramsUnavailable(.noAnswer) }
            return fail(.noResponse(command: p.command.name, attempts: attempts, timeout: options.requestTimeout))
        }
        guard let report = countRetry(.requestRetried(command: p.command.name, cause: cause, attempt: attempts + 1))
        else {
            return fail(.tooManyRetries(result.retries - 1))
        }
        if let delay {
            state.pending?.attempts = attempts
            return report + [.cancelTimer(Self.requestTimer), .startTimer(Self.busyTimer, delay)]
        }
        return report + send(p.command, attempts: attempts, for: purpose)
    }

    /// Feeds a notification and handles every frame it completes.
    mutating func received(_ bytes: [UInt8], now: Duration) -> [FlowAction] {
        let (frames, failure, traces) = channel.receive(bytes)
        if !frames.isEmpty {
            budget.consecutiveTimeouts = 0
            budget.silentUploadTimeouts = 0
        }
        var actions = traces
        for frame in frames where !state.isFinished {
            actions += state.isUploading ? uploadAnswered(frame) : answered(frame, now: now)
        }
        if let failure, !state.isFinished {
            // A garbled notification: the request timer will ask again.
            actions.append(Self.report(.unreadableNotification(failure)))
        }
        return actions
    }

    /// The answer to the pending single request.
    private mutating func answered(_ frame: SMPFrame, now: Duration) -> [FlowAction] {
        guard let p = state.pending, frame.header.sequence == p.sequence, frame.header.operation.isResponse else {
            return []
        }
        let command = p.command
        if command != .params, case .returnCode(.busy, _)? = try? frame.errorResponse() {
            return retryPending(.busy, after: options.busyRetryDelay)
        }
        budget.disconnectsWithoutProgress = 0
        let stop: [FlowAction] = [.cancelTimer(Self.requestTimer)]
        do throws(SMPError) {
            switch command {
            case .params:
                guard (try? frame.errorResponse()) == nil,
                    let params = try? frame.response(as: MCUmgrParametersResponse.self)
                else {
                    return stop + paramsUnavailable(.notReported)
                }
                return stop + paramsKnown(params)
            case .stateRead:
                let images = try frame.response(as: ImageStateResponse.self).images
                slotsRead(images)
                if case let .readingBack(readBack) = state {
                    return stop + finish(readBack.cause, .readAfterFailure, images)
                }
                return stop + (state.step == .verify ? verified(images) : validated(images))
            case .test, .confirm:
                let images = try frame.response(as: ImageStateResponse.self).images
                slotsRead(images)
                return stop + stateWritten(command, slots: images)
            case .reset:
                _ = try frame.response(as: ResetResponse.self)
                if case var .resetting(reset) = state {
                    reset.phase = .answered(at: now)
                    state = .resetting(reset)
                }
                return stop + [.startTimer(Self.resetTimer, options.resetDisconnectTimeout)]
            }
        } catch {
            if let refusal = try? frame.errorResponse() {
                // Confirming after the reset is refused while the image still waits for its test boot
                // (Zephyr's `img_mgmt_set_next_boot_slot`, type TEST): the device did not reset.
                if case .confirm = command, state.step == .confirm, board.swapped, Self.isAlreadyPending(refusal),
                    let again = resetAgain(stillPending: true)
                {
                    return again
                }
                // A test sent again (its answer lost) after the device reset and swapped: the image
                // already runs, and Zephyr refuses to test the active slot. Go on as after the swap.
                if command == .test, state.step == .test, refusal == .group(.image(.imageSettingTestToActiveDenied)) {
                    board.swapped = true
                    return [Self.report(.alreadyRunningAfterTest)]
                        + (options.mode == .testAndConfirm ? begin(.confirm) : begin(.verify))
                }
                return fail(.deviceRefused(command: command.name, refusal))
            }
            return fail(.malformedResponse(command: command.name, error))
        }
    }

    /// The device reported its slots: the board as it stands now.
    private mutating func slotsRead(_ slots: [ImageSlotState]) {
        board.lastSlots = slots
        board.changedSinceLastRead = false
    }

    private mutating func paramsUnavailable(_ problem: McuMgrParametersProblem) -> [FlowAction] {
        depth = 1
        result.pipelineDepth = 1
        channel.reassembly = false
        channel.frameLimit = channel.writeSize
        result.frameLimit = channel.frameLimit
        return [
            .cancelTimer(Self.requestTimer),
            Self.report(.parametersUnavailable(problem))
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
        let note = McuMgrReport.deviceBuffers(
            count: params.bufferCount, size: params.bufferSize, frameLimit: channel.frameLimit, inFlight: depth)
        return [Self.report(note)] + begin(.validate)
    }

    private mutating func validated(_ slots: [ImageSlotState]) -> [FlowAction] {
        switch ValidateDecision.decide(slots: slots, image: image, mode: options.mode) {
        case .alreadyInstalled:
            result.uploadSkipped = true
            result.alreadyInstalled = true
            return [Self.report(.alreadyRunning)] + succeed(slots)
        case .upload:
            return beginUpload()
        case let .skipUpload(step):
            result.uploadSkipped = true
            return [Self.report(.alreadyHeld)] + proceed(step)
        case let .confirmPrimary(hash):
            guard let more = recover() else { return fail(.secondarySlotBusy(attempts: budget.recoveries - 1)) }
            return more + send(.confirm(hash: hash), attempts: 0, for: .step(.recoverConfirm))
        case .resetForPendingImage:
            guard let more = recover() else { return fail(.secondarySlotBusy(attempts: budget.recoveries - 1)) }
            return more + beginReset(then: .validate)
        case let .fail(error):
            return fail(error)
        }
    }

    private mutating func recover() -> [FlowAction]? {
        budget.recoveries += 1
        guard budget.recoveries <= 2 else { return nil }
        return [Self.report(.clearingSecondarySlot)]
    }

    private mutating func stateWritten(_ command: Command, slots: [ImageSlotState]) -> [FlowAction] {
        if state.step == .recoverConfirm { return begin(.validate) }
        let ours = slots.filter { ($0.image ?? 0) == image.imageNumber && $0.hash == image.hash }
        switch state.step {
        case .test:
            guard ours.contains(where: { $0.pending }) else {
                return fail(.stateNotAccepted(command: command.name, expected: "pending (test)"))
            }
            return proceed(.reset)
        case .confirm where board.swapped:
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
            return beginReset(then: .verify)
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
        guard options.mode != .uploadOnly, stillPending, budget.resetRepeats < 2 else { return nil }
        budget.resetRepeats += 1
        guard let report = countRetry(.resetAgain) else { return fail(.tooManyRetries(result.retries - 1)) }
        // A tested image still has to be confirmed once it runs.
        return report + beginReset(then: options.mode == .testAndConfirm && state.step == .confirm ? .confirm : .verify)
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

extension McuMgrUpgrade.State {
    /// What the single request outstanding serves, to send it again.
    var purpose: McuMgrUpgrade.Purpose? {
        switch self {
        case let .requesting(step, _): return .step(step)
        case let .resetting(reset): return .reset(then: reset.then)
        case let .readingBack(readBack): return .readBack(cause: readBack.cause)
        case .idle, .uploading, .finished: return nil
        }
    }
}
