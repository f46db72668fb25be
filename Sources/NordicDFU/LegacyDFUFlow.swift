import NordicDFUFrames
import Transport

/// Legacy DFU (micro:bit V1, Calliope mini 1/2) as a pure state machine (docs/protocols/nordic-dfu.md §3.5):
/// `01` to the micro:bit DFU control characteristic, reconnection to "DfuTarg", Start DFU
/// with the image sizes, the 14-byte init packet, the firmware in 20-byte packets with
/// receipts, Validate (the bootloader's CRC-16 check) and Activate. The bootloader cannot
/// resume: after any loss the flow resets it and starts the transfer again.
public struct LegacyDFUFlow: FlowMachine, RetryBudgetedFlow {
    public typealias Output = NordicDFUResult
    public private(set) var outcome: Result<NordicDFUResult, any Error>?

    enum Step: Equatable {
        case idle, entering, reconnecting, start, initParameters, receiving, validate, activating, verifying, resetting,
            done
    }

    let image: [UInt8]
    let initPacket: [UInt8]
    let options: NordicDFUOptions
    var step: Step = .idle
    var result: NordicDFUResult
    var packetSize = 20
    var sent = 0
    var restarts = 0
    var timeouts = 0
    var connectFailures = 0
    /// Connections to the bootloader in a row that dropped before its first answer.
    var silentDrops = 0
    var answeredOnThisLink = false
    /// Activate requests sent for the validated image.
    var activations = 0
    /// Entries into the bootloader from the application (a reset before Start brings the
    /// application back, and the entry is made again).
    var entries = 0

    static let responseTimer = TimerID("response")
    static let receiptTimer = TimerID("receipt")
    static let resetTimer = TimerID("reset")

    public init(application: DFUApplication, options: NordicDFUOptions = NordicDFUOptions()) {
        image = application.bytes
        initPacket = application.legacyInitPacket.bytes
        self.options = options
        result = NordicDFUResult(dfuProtocol: .legacy, applicationBytes: application.bytes.count)
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] { advanceWithinBudget(event) }

    mutating func advance(_ event: FlowEvent) -> [FlowAction] {
        switch event {
        case let .start(info): return connected(info, first: true)
        case let .connected(info): return connected(info, first: false)
        case .connectFailed where step == .verifying:
            // The bootloader advertises all the time: a board that no longer does runs its application
            // (one whose program keeps Bluetooth off does not advertise at all).
            connectFailures += 1
            guard connectFailures < 2 * options.reconnectAttempts else { return finish() }
            return [.connect(after: options.reconnectDelay, to: .application)]
        case let .connectFailed(error):
            connectFailures += 1
            guard connectFailures < options.reconnectAttempts else {
                return fail(.bootloaderNotFound(attempts: connectFailures))
            }
            return [.report(.retry("reconnecting: \(error)")), .connect(after: options.reconnectDelay, to: .bootloader)]
        case let .disconnected(reason): return disconnected(reason)
        case let .writeFailed(_, error):
            if case .characteristicNotFound = error { return fail(.noDFUService) }
            if case let .failed(_, message) = error, Self.isEncryptionFailure(message) {
                return fail(.bondingTrap(attempts: silentDrops + 1))
            }
            return []
        case let .notification(ch, bytes):
            guard ch == NordicGATT.legacyControlPoint else { return [] }
            guard let n = try? LegacyDFUNotification(bytes: bytes) else {
                return fail(.unexpectedAnswer(step: stepName, bytes: bytes))
            }
            answeredOnThisLink = true
            silentDrops = 0
            return answer(n)
        case let .timerFired(id): return timerFired(id)
        }
    }

    static func isEncryptionFailure(_ message: String) -> Bool {
        let m = message.lowercased()
        return m.contains("authentication") || m.contains("encryption") || m.contains("insufficient")
    }

    private mutating func connected(_ info: ConnectionInfo, first: Bool) -> [FlowAction] {
        connectFailures = 0
        answeredOnThisLink = false
        guard let target = NordicDFUTarget(info), !target.isSecure else { return fail(.noDFUService) }
        if target == .legacyApplication {
            if result.verified { return finish() }
            guard entries < 3 else { return fail(.bootloaderNotFound(attempts: entries)) }
            if entries > 0 { result.retries += 1 }
            entries += 1
            step = .entering
            return [
                .report(.phase(.reset)),
                .report(.note("entering the Nordic legacy bootloader (micro:bit DFU control)")),
                .write(NordicGATT.dfuControl, [0x01], .request), .startTimer(Self.resetTimer, options.entryTimeout)
            ]
        }
        if first { result.recoveredFromBootloader = true }
        result.bootloaderConnections += 1
        if step == .verifying {
            // The validated image was not started: activate it again, or start over when the bootloader lost it.
            activations += 1
            guard activations <= 2 else { return restart(why: "the bootloader did not start the validated image") }
            step = .activating
            return [
                .subscribe(NordicGATT.legacyControlPoint),
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.activateAndReset.bytes, .request),
                .startTimer(Self.resetTimer, options.entryTimeout)
            ]
        }
        packetSize = max(4, min(20, (info.mtu - 3) & ~3))
        var actions: [FlowAction] = [.report(.phase(.upload))]
        if first {
            actions.append(
                .report(.note("the board is in its bootloader (\"DfuTarg\"): recovering it with a full update")))
        }
        return actions + startTransfer()
    }

    private mutating func startTransfer() -> [FlowAction] {
        sent = 0
        result.verified = false
        step = .start
        return [
            .subscribe(NordicGATT.legacyControlPoint),
            .write(
                NordicGATT.legacyControlPoint, LegacyDFURequest.start(mode: LegacyDFURequest.applicationMode).bytes,
                .request),
            .write(NordicGATT.legacyPacket, LegacyImageSizes(application: UInt32(image.count)).bytes, .command),
            .startTimer(Self.responseTimer, options.startTimeout)
        ]
    }

    private mutating func disconnected(_ reason: DisconnectReason) -> [FlowAction] {
        let cancel: [FlowAction] = [
            .cancelTimer(Self.responseTimer), .cancelTimer(Self.receiptTimer), .cancelTimer(Self.resetTimer)
        ]
        switch step {
        case .idle, .done, .reconnecting: return []
        case .activating:
            // The bootloader resets into the validated application; a new connection shows whether it runs.
            step = .verifying
            return cancel + [
                .report(.trace("checking that the board left its bootloader")),
                .connect(after: options.reconnectDelay, to: .application)
            ]
        case .verifying:
            return []
        case .entering, .resetting:
            step = .reconnecting
            return cancel + [.report(.phase(.connecting)), .connect(after: options.reconnectDelay, to: .bootloader)]
        default:
            if !answeredOnThisLink {
                silentDrops += 1
                if silentDrops >= 3 { return fail(.bondingTrap(attempts: silentDrops)) }
            }
            restarts += 1
            result.retries += 1
            let during = stepName
            guard restarts <= options.linkLossLimit else { return fail(.linkLost(step: during, attempts: restarts)) }
            step = .reconnecting
            return cancel + [
                .report(.retry("link lost during \(during) (\(reason)): starting the transfer again")),
                .connect(after: options.reconnectDelay, to: .bootloader)
            ]
        }
    }

    private mutating func timerFired(_ id: TimerID) -> [FlowAction] {
        switch (id, step) {
        case (Self.resetTimer, .entering), (Self.resetTimer, .resetting), (Self.resetTimer, .activating):
            // Nothing came back: close the link ourselves (the disconnect moves the flow on).
            return [.disconnect]
        case (Self.receiptTimer, .receiving):
            return restart(why: "no packet receipt at \(sent) bytes")
        case (Self.responseTimer, _) where step != .done && step != .reconnecting && step != .verifying:
            timeouts += 1
            guard timeouts <= options.timeoutLimit else { return fail(.timedOut(step: stepName, attempts: timeouts)) }
            return restart(why: "no answer to \(stepName)")
        default: return []
        }
    }

    /// The bootloader cannot resume: reset it (it comes back as "DfuTarg") and start again.
    private mutating func restart(why: String) -> [FlowAction] {
        restarts += 1
        result.retries += 1
        guard restarts <= options.linkLossLimit else {
            return fail(.checksumMismatch(step: "the firmware", attempts: restarts))
        }
        step = .resetting
        return [
            .cancelTimer(Self.responseTimer), .cancelTimer(Self.receiptTimer),
            .report(.retry("\(why): resetting the bootloader and starting the transfer again")),
            .write(NordicGATT.legacyControlPoint, LegacyDFURequest.reset.bytes, .request),
            .startTimer(Self.resetTimer, options.entryTimeout)
        ]
    }

    private mutating func answer(_ n: LegacyDFUNotification) -> [FlowAction] {
        let cancel: [FlowAction] = [.cancelTimer(Self.responseTimer)]
        switch (step, n) {
        case (.start, .response(0x01, 0x01)):
            step = .initParameters
            return cancel + [
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.initParameters(complete: false).bytes, .request),
                .write(NordicGATT.legacyPacket, initPacket, .command),
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.initParameters(complete: true).bytes, .request),
                .startTimer(Self.responseTimer, options.responseTimeout)
            ]
        case (.start, .response(0x01, LegacyDFUStatus.invalidState.rawValue)):
            // An earlier, unfinished transfer in this bootloader session.
            return cancel + restart(why: "the bootloader holds an unfinished transfer")
        case (.initParameters, .response(0x02, 0x01)):
            step = .receiving
            result.bytesSent += initPacket.count
            return cancel + [
                .report(.trace("init packet accepted: \(image.count) bytes follow")),
                .write(
                    NordicGATT.legacyControlPoint,
                    LegacyDFURequest.packetReceiptRequest(options.legacyPacketReceipts).bytes, .request),
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.receiveFirmware.bytes, .request)
            ] + sendBatch()
        case let (.receiving, .receipt(count)):
            let c = Int(count)
            if c == sent {
                if sent == image.count { return [] }  // the completion answer follows
                return [
                    .cancelTimer(Self.receiptTimer), .report(.progress(done: sent, total: image.count, unit: .bytes))
                ] + sendBatch()
            }
            if c < sent, sent == image.count { return [] }
            return restart(why: "packet receipt at \(c) bytes, \(sent) sent")
        case (.receiving, .response(0x03, 0x01)):
            guard sent == image.count else { return fail(.unexpectedAnswer(step: stepName, bytes: n.bytes)) }
            step = .validate
            return cancel + [
                .report(.progress(done: sent, total: image.count, unit: .bytes)), .report(.phase(.verify)),
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.validate.bytes, .request),
                .startTimer(Self.responseTimer, options.responseTimeout)
            ]
        case (.receiving, .response(0x03, LegacyDFUStatus.operationFailed.rawValue)),
            (.validate, .response(0x04, LegacyDFUStatus.crcError.rawValue)):
            return [.cancelTimer(Self.receiptTimer)] + cancel
                + restart(why: "the bootloader reported \(n.bytes.hexText)")
        case (.activating, .response(0x05, _)):
            return restart(why: "the bootloader no longer holds the validated image")
        case (.validate, .response(0x04, 0x01)):
            step = .activating
            activations = 1
            result.verified = true
            return cancel + [
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.activateAndReset.bytes, .request),
                .startTimer(Self.resetTimer, options.entryTimeout)
            ]
        case let (_, .response(op, status)) where status != 0x01 && op == expectedOpcode:
            return fail(.legacyRejected(step: stepName, opcode: op, status: status))
        default:
            return []
        }
    }

    private mutating func sendBatch() -> [FlowAction] {
        var actions: [FlowAction] = []
        let n = options.legacyPacketReceipts == 0 ? Int.max : Int(options.legacyPacketReceipts)
        var count = 0
        while sent < image.count, count < n {
            let chunk = Array(image[sent..<min(image.count, sent + packetSize)])
            actions.append(.write(NordicGATT.legacyPacket, chunk, .command))
            result.bytesSent += chunk.count
            sent += chunk.count
            count += 1
        }
        if sent == image.count {
            // The answer to Receive firmware comes once the last packet is in flash.
            return actions + [.cancelTimer(Self.receiptTimer), .startTimer(Self.responseTimer, options.responseTimeout)]
        }
        return actions + [.startTimer(Self.receiptTimer, options.receiptTimeout)]
    }

    private var expectedOpcode: UInt8 {
        switch step {
        case .start: return 0x01
        case .initParameters: return 0x02
        case .receiving: return 0x03
        case .validate: return 0x04
        default: return 0xFF
        }
    }

    var stepName: String {
        switch step {
        case .idle, .entering: return "the entry into the bootloader"
        case .reconnecting: return "the reconnection"
        case .start: return "Start DFU (the erase of the old application)"
        case .initParameters: return "the init packet"
        case .receiving: return "the firmware transfer"
        case .validate: return "the validation of the image"
        case .activating, .verifying: return "the activation"
        case .resetting: return "the bootloader reset"
        case .done: return "the end"
        }
    }

    private mutating func finish() -> [FlowAction] {
        step = .done
        outcome = .success(result)
        return [
            .cancelTimer(Self.responseTimer), .cancelTimer(Self.receiptTimer), .cancelTimer(Self.resetTimer),
            .report(.phase(.done)), .finish
        ]
    }

    mutating func fail(_ error: NordicDFUError) -> [FlowAction] {
        step = .done
        outcome = .failure(error)
        return [.finish]
    }
}
