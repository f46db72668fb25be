import NordicDFUFrames
import Transport

/// Secure DFU (micro:bit V2, Calliope mini 3) as a pure state machine (docs/protocols/nordic-dfu.md §2.5, §2.6):
/// buttonless entry from the application (or straight on when the board is already in
/// "DfuTarg"), reconnection, the init command, then the firmware in data objects with packet
/// receipts and CRC-32 checks, resuming what the bootloader still holds after a link loss.
public struct SecureDFUFlow: FlowMachine, RetryBudgetedFlow {
    public typealias Output = NordicDFUResult
    public private(set) var outcome: Result<NordicDFUResult, any Error>?

    enum Step: Equatable {
        case idle, buttonless, waitingForReset, reconnecting
        case selectCommand, createCommand, commandPRNOff, commandChecksum, executeCommand
        case setPRN(thenSend: Bool), selectData, createData, waitingForFlash, awaitingReceipt, dataChecksum
        case executeData(final: Bool, resume: Bool), done
    }

    let image: [UInt8]
    let initPacket: [UInt8]
    let options: NordicDFUOptions
    var step: Step = .idle
    var result: NordicDFUResult
    /// The shared budget's record (this flow still counts in its own variables below).
    var budget = DFUBudget()
    var buttonless = NordicGATT.buttonlessBonded
    /// Entries into the bootloader from the application (a reset before the init was executed
    /// brings the old application back, and the entry is made again).
    var entries = 0
    var finalExecuteSent = false
    var packetSize = 20
    var maxObject = 4096
    /// Image bytes sent so far in the current pass (the position in the image).
    var sent = 0
    var objectStart = 0
    var objectEnd = 0
    var objectAttempts = 0
    var commandAttempts = 0
    var timeouts = 0
    var linkLosses = 0
    var connectFailures = 0
    /// The running CRC-32 of the image up to `crcOffset` (checksums are asked in increasing order).
    var crcOffset = 0
    var runningCRC = CRC32()
    var prefixCRC: [Int: UInt32] = [0: 0]
    /// The time of the event being handled.
    var now: Duration = .zero
    /// Pacing of the current object (`SecureDFUFlow+Pacing`), and when the flash wait ends.
    var pacing = SecureDFUPacing()
    /// When the last control-point request was written: a Create's erase starts once it arrives.
    var requestedAt: Duration = .zero
    var flashWake: Duration = .zero

    static let responseTimer = TimerID("response")
    static let receiptTimer = TimerID("receipt")
    static let delayTimer = TimerID("flash-wait")
    static let resetTimer = TimerID("reset")

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
            connectFailures += 1
            guard connectFailures < options.reconnectAttempts else {
                return fail(.bootloaderNotFound(attempts: connectFailures))
            }
            return [.report(.retry("reconnecting: \(error)")), .connect(after: options.reconnectDelay, to: .bootloader)]
        case let .disconnected(reason): return disconnected(reason)
        case let .writeFailed(ch, error):
            if step == .buttonless, ch == NordicGATT.buttonlessBonded, case .characteristicNotFound = error {
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
                return fail(.unexpectedAnswer(step: stepName, bytes: bytes))
            }
            return answer(response)
        case let .timerFired(id): return timerFired(id)
        }
    }

    // MARK: connection

    private mutating func connected(_ info: ConnectionInfo, first: Bool) -> [FlowAction] {
        connectFailures = 0
        guard let target = NordicDFUTarget(info), target.isSecure else { return fail(.noDFUService) }
        if target == .secureApplication {
            if finalExecuteSent {
                // Only a validated image leaves the bootloader: the board runs the new application.
                result.verified = true
                result.endedOnApplication = true
                return finish()
            }
            guard entries < 3 else { return fail(.bootloaderNotFound(attempts: entries)) }
            if entries > 0 { result.retries += 1 }
            entries += 1
            step = .buttonless
            return [
                .report(.phase(.reset)),
                .report(.note("entering the Nordic secure bootloader (buttonless DFU)")),
                .subscribe(buttonless), .write(buttonless, ButtonlessMessage.enterBootloader.bytes, .request),
                .startTimer(Self.responseTimer, options.entryTimeout)
            ]
        }
        if first {
            result.recoveredFromBootloader = true
        }
        result.bootloaderConnections += 1
        packetSize = max(20, min(244, (info.mtu - 3) & ~3))
        var actions: [FlowAction] = [.report(.phase(.upload))]
        if first {
            actions.append(
                .report(.note("the board is in its bootloader (\"DfuTarg\"): recovering it with a full update")))
        }
        actions += [.subscribe(NordicGATT.secureControlPoint)]
        return actions + request(.select(.command), step: .selectCommand)
    }

    private mutating func disconnected(_ reason: DisconnectReason) -> [FlowAction] {
        switch step {
        case .idle, .done: return []
        case .reconnecting: return []
        case .buttonless, .waitingForReset:
            step = .reconnecting
            return [
                .cancelTimer(Self.responseTimer), .cancelTimer(Self.resetTimer), .report(.phase(.connecting)),
                .connect(after: options.reconnectDelay, to: .bootloader)
            ]
        default:
            linkLosses += 1
            result.retries += 1
            let during = stepName
            guard linkLosses <= options.linkLossLimit else {
                return fail(.linkLost(step: during, attempts: linkLosses))
            }
            step = .reconnecting
            return [
                .cancelTimer(Self.responseTimer), .cancelTimer(Self.receiptTimer), .cancelTimer(Self.delayTimer),
                .report(.retry("link lost during \(during) (\(reason)): reconnecting to the bootloader")),
                .connect(after: options.reconnectDelay, to: .bootloader)
            ]
        }
    }

    private mutating func buttonlessAnswer(_ bytes: [UInt8]) -> [FlowAction] {
        guard step == .buttonless else { return [] }
        guard case let .response(op, code)? = try? ButtonlessMessage(bytes: bytes), op == 0x01 else {
            return fail(.unexpectedAnswer(step: "the buttonless entry", bytes: bytes))
        }
        switch code {
        case ButtonlessMessage.success:
            step = .waitingForReset
            return [.cancelTimer(Self.responseTimer), .startTimer(Self.resetTimer, options.entryTimeout)]
        case ButtonlessMessage.notBonded: return fail(.notBonded)
        default: return fail(.buttonlessRefused(result: code))
        }
    }

    private mutating func timerFired(_ id: TimerID) -> [FlowAction] {
        switch id {
        case Self.resetTimer:
            return step == .waitingForReset ? [.disconnect] : []
        case Self.delayTimer:
            guard step == .waitingForFlash else { return [] }
            // The timer was set for the end of the wait: a driver whose clock lags still moves on.
            now = max(now, flashWake)
            return sendBatch()
        case Self.receiptTimer:
            guard step == .awaitingReceipt else { return [] }
            result.retries += 1
            return [.report(.retry("no packet receipt at \(sent) bytes: asking for the checksum"))]
                + request(.calculateChecksum, step: .dataChecksum)
        case Self.responseTimer:
            if step == .buttonless { return fail(.timedOut(step: "the buttonless entry", attempts: 1)) }
            // Only a step that awaits an answer runs this timer: a firing in any other step is
            // stale (cancelled as it fired) and must not move the flow, least of all past the init command.
            guard awaitsAnswer else { return [] }
            timeouts += 1
            result.retries += 1
            guard timeouts <= options.timeoutLimit else { return fail(.timedOut(step: stepName, attempts: timeouts)) }
            let again: [FlowAction] = [.report(.retry("no answer to \(stepName): asking where the bootloader is"))]
            switch step {
            case .selectCommand, .createCommand, .commandPRNOff, .commandChecksum, .executeCommand:
                return again + request(.select(.command), step: .selectCommand)
            default:
                return again + request(.setPRN(options.securePacketReceipts), step: .setPRN(thenSend: false))
            }
        default: return []
        }
    }

    /// The step has a control-point request outstanding (the response timer runs).
    var awaitsAnswer: Bool {
        switch step {
        case .idle, .buttonless, .waitingForReset, .reconnecting, .waitingForFlash, .awaitingReceipt, .done:
            return false
        default: return true
        }
    }

    var stepName: String {
        switch step {
        case .idle, .buttonless, .waitingForReset: return "the buttonless entry"
        case .reconnecting: return "the reconnection"
        case .selectCommand, .createCommand, .commandPRNOff, .commandChecksum: return "the init packet"
        case .executeCommand: return "the init packet's execution"
        case .setPRN: return "the packet receipt setting"
        case .selectData: return "the firmware selection"
        case .createData, .waitingForFlash, .awaitingReceipt, .dataChecksum:
            return "the object at offset \(objectStart)"
        case .executeData(true, _): return "the final validation of the image"
        case .executeData: return "the execution of the object at offset \(objectStart)"
        case .done: return "the end"
        }
    }

    mutating func finish() -> [FlowAction] {
        step = .done
        outcome = .success(result)
        return [.cancelTimer(Self.responseTimer), .cancelTimer(Self.receiptTimer), .report(.phase(.done)), .finish]
    }

    mutating func fail(_ error: NordicDFUError) -> [FlowAction] {
        step = .done
        outcome = .failure(error)
        return [.finish]
    }
}
