import NordicDFUFrames
import Transport

/// Secure DFU (micro:bit V2, Calliope mini 3) as a pure state machine (docs/protocols/nordic-dfu.md §2.5, §2.6):
/// buttonless entry from the application (or straight on when the board is already in
/// "DfuTarg"), reconnection, the init command, then the firmware in data objects with packet
/// receipts and CRC-32 checks, resuming what the bootloader still holds after a link loss.
///
/// Each state holds the data that means something in it (`SecureDFUFlow+State`): the
/// connection's packet size only on a bootloader link, the object and the bytes sent only
/// while an object goes out. What spans states is the run's: the `DFUBudget`, the flash
/// pacing, the image's checksums and which buttonless characteristic the application offers.
public struct SecureDFUFlow: FlowMachine, RetryBudgetedFlow {
    public typealias Output = NordicDFUResult
    public typealias Report = NordicDFUReport
    public private(set) var outcome: Result<NordicDFUResult, any Error>?

    let image: [UInt8]
    let initPacket: [UInt8]
    let options: NordicDFUOptions
    var state = State.idle
    var result: NordicDFUResult
    var budget = DFUBudget()
    /// The buttonless characteristic the application offers (the bonded one unless it lacks it).
    var buttonless = NordicGATT.buttonlessBonded
    /// The last object's Execute was sent: a board found on its application now runs the new image.
    var finalExecuteSent = false
    var checksums = ImagePrefixCRC()
    /// Pacing of the objects (`SecureDFUFlow+Pacing`): the flash work the flow knows of.
    var pacing = SecureDFUPacing()
    /// The time of the event being handled.
    var now: Duration = .zero

    static let responseTimer = TimerID("response")
    static let receiptTimer = TimerID("receipt")
    static let delayTimer = TimerID("flash-wait")
    static let resetTimer = TimerID("reset")
    /// Stops what a step on the bootloader's link waits for, when that link is gone or never came.
    static let stopLinkTimers: [FlowAction] = [
        .cancelTimer(responseTimer), .cancelTimer(receiptTimer), .cancelTimer(delayTimer)
    ]

    public init(application: DFUApplication, options: NordicDFUOptions = NordicDFUOptions()) {
        image = application.bytes
        initPacket = application.secureInitPacket.bytes
        self.options = options
        result = NordicDFUResult(dfuProtocol: .secure, applicationBytes: application.bytes.count)
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        self.now = now
        return advanceWithinBudget(event)
    }

    mutating func advance(_ event: FlowEvent) -> [FlowAction] {
        switch event {
        case let .start(info): return connected(info, first: true)
        case let .connected(info): return connected(info, first: false)
        case let .connectFailed(error):
            var reconnect = Reconnect()
            // Only a connection the flow asked for can fail: it was one to the bootloader. A
            // step that was still waiting on the old link leaves its timers behind.
            var stop = Self.stopLinkTimers
            if case let .reconnecting(r) = state {
                reconnect = r
                stop = []
            }
            reconnect.failures += 1
            state = .reconnecting(reconnect)
            return stop + connectAgain(after: error, failures: reconnect.failures)
        case let .disconnected(reason): return disconnected(reason)
        case let .writeFailed(ch, error):
            if state == .buttonless, ch == NordicGATT.buttonlessBonded, case .characteristicNotFound = error {
                // An application built without bonds offers the other buttonless characteristic.
                buttonless = NordicGATT.buttonlessUnbonded
                return [.subscribe(buttonless), .write(buttonless, ButtonlessMessage.enterBootloader.bytes, .request)]
            }
            if case .characteristicNotFound = error, ch != NordicGATT.buttonlessBonded { return fail(.noDFUService) }
            return []  // the link is going down: the disconnect (or a timeout) follows
        case let .notification(ch, bytes):
            if ch == buttonless { return buttonlessAnswer(bytes) }
            guard ch == NordicGATT.secureControlPoint else { return [] }
            guard let response = try? SecureDFUResponse(bytes: bytes) else {
                return fail(.unexpectedAnswer(step: step.name, bytes: bytes))
            }
            return answer(response)
        case let .timerFired(id): return timerFired(id)
        }
    }

    // MARK: connection

    private mutating func connected(_ info: ConnectionInfo, first: Bool) -> [FlowAction] {
        guard let target = NordicDFUTarget(info), target.isSecure else { return fail(.noDFUService) }
        var report: [FlowAction] = []
        if target == .secureApplication {
            if finalExecuteSent {
                // Only a validated image leaves the bootloader: the board runs the new application.
                result.verified = true
                result.endedOnApplication = true
                return finish()
            }
            state = .buttonless
            return enterBootloader(
                writes: [
                    .subscribe(buttonless), .write(buttonless, ButtonlessMessage.enterBootloader.bytes, .request),
                    .startTimer(Self.responseTimer, options.entryTimeout)
                ])
        }
        if case let .reconnecting(reconnect) = state, reconnect.lostAtValidation {
            // Back in the bootloader: the loss during the final validation was one after all.
            budget.losses += 1
            result.retries += 1
            guard budget.losses <= options.linkLossLimit else {
                return fail(.linkLost(step: NordicDFUStep.finalValidation.name, attempts: budget.losses))
            }
            report = [Self.report(.bootloaderAfterFinalValidation)]
        }
        let reached = report + bootloaderReached(first: first)
        let link = Link(packetSize: max(20, min(244, (info.mtu - 3) & ~3)))
        state = .selectingCommand(link)
        return reached + [.subscribe(NordicGATT.secureControlPoint)] + request(.select(.command))
    }

    private mutating func disconnected(_ reason: DisconnectReason) -> [FlowAction] {
        switch state {
        case .idle, .done, .reconnecting: return []
        case .buttonless, .waitingForReset:
            state = .reconnecting(Reconnect())
            return [
                .cancelTimer(Self.responseTimer), .cancelTimer(Self.resetTimer), .report(.phase(.connecting)),
                .connect(after: options.reconnectDelay, to: .bootloader)
            ]
        case .executing(_, final: true, _):
            // The bootloader answers the last Execute, writes its settings and their backup and
            // resets at once (V2 bootloader `nrf_dfu_req_handler.c` `on_data_obj_execute_request_sched`
            // → `on_dfu_complete`; SDK 16 `nrf_bootloader.c` `dfu_observer` → `bootloader_reset`,
            // `NRF_BL_RESET_DELAY_MS` 0). On a radio shared by many boards the answer can still wait
            // for its connection event when the reset comes: the board then runs the new image.
            // Whether it does is seen on the next connection; only a bootloader there counts a retry.
            state = .reconnecting(Reconnect(lostAtValidation: true))
            return Self.stopLinkTimers + [
                Self.report(.closedDuringFinalValidation(reason)),
                .connect(after: options.reconnectDelay, to: .bootloader)
            ]
        default:
            let during = step
            state = .reconnecting(Reconnect())
            return linkLost(reason, during: during, cancelling: Self.stopLinkTimers, restartsTransfer: false)
        }
    }

    private mutating func buttonlessAnswer(_ bytes: [UInt8]) -> [FlowAction] {
        guard state == .buttonless else { return [] }
        guard case let .response(op, code)? = try? ButtonlessMessage(bytes: bytes), op == 0x01 else {
            return fail(.unexpectedAnswer(step: NordicDFUStep.buttonlessEntry.name, bytes: bytes))
        }
        switch code {
        case ButtonlessMessage.success:
            state = .waitingForReset
            return [.cancelTimer(Self.responseTimer), .startTimer(Self.resetTimer, options.entryTimeout)]
        case ButtonlessMessage.notBonded: return fail(.notBonded)
        default: return fail(.buttonlessRefused(result: code))
        }
    }

    private mutating func timerFired(_ id: TimerID) -> [FlowAction] {
        switch id {
        case Self.resetTimer:
            return state == .waitingForReset ? [.disconnect] : []
        case Self.delayTimer:
            guard case let .waitingForFlash(object, wake) = state else { return [] }
            // The timer was set for the end of the wait: a driver whose clock lags still moves on.
            now = max(now, wake)
            return sendBatch(object)
        case Self.receiptTimer:
            guard case let .awaitingReceipt(object) = state else { return [] }
            result.retries += 1
            return [Self.report(.noPacketReceipt(sent: object.sent))]
                + check(object)
        case Self.responseTimer:
            if state == .buttonless { return fail(.timedOut(step: NordicDFUStep.buttonlessEntry.name, attempts: 1)) }
            // Only a step that awaits an answer runs this timer: a firing in any other step is
            // stale (cancelled as it fired) and must not move the flow, least of all past the init command.
            guard awaitsAnswer, let link = state.link else { return [] }
            budget.timeouts += 1
            result.retries += 1
            guard budget.timeouts <= options.timeoutLimit else {
                return fail(.timedOut(step: step.name, attempts: budget.timeouts))
            }
            let again: [FlowAction] = [Self.report(.noAnswer(to: step))]
            if state.isCommand {
                state = .selectingCommand(link)
                return again + request(.select(.command))
            }
            state = .settingReceipts(link)
            return again + request(.setPRN(options.securePacketReceipts))
        default: return []
        }
    }

    mutating func finish() -> [FlowAction] {
        state = .done
        outcome = .success(result)
        return [.cancelTimer(Self.responseTimer), .cancelTimer(Self.receiptTimer), .report(.phase(.done)), .finish]
    }

    mutating func fail(_ error: NordicDFUError) -> [FlowAction] {
        state = .done
        outcome = .failure(error)
        return [.finish]
    }
}
