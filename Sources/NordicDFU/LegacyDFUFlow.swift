import NordicDFUFrames
import Transport

/// Legacy DFU (micro:bit V1, Calliope mini 1/2) as a pure state machine (docs/protocols/nordic-dfu.md §3.5):
/// `01` to the micro:bit DFU control characteristic, reconnection to "DfuTarg", Start DFU
/// with the image sizes, the 14-byte init packet, the firmware in 20-byte packets with
/// receipts, Validate (the bootloader's CRC-16 check) and Activate. The bootloader cannot
/// resume: after any loss the flow resets it and starts the transfer again.
///
/// Each state holds the data that means something in it (the connection's packet size only
/// on a bootloader link, the bytes sent only while the firmware goes out); the counts that
/// span states are the run's `DFUBudget`.
public struct LegacyDFUFlow: FlowMachine, RetryBudgetedFlow {
    public typealias Output = NordicDFUResult
    public typealias Report = NordicDFUReport
    public private(set) var outcome: Result<NordicDFUResult, any Error>?

    /// Where the update stands, with the data that means something there.
    enum State: Equatable {
        case idle
        /// On the application: the entry into the bootloader was written; the board resets.
        case entering
        /// The link is down; a connection to the bootloader is asked for.
        case reconnecting(Reconnect)
        /// On the bootloader: Start DFU was sent (the bootloader erases the old application).
        case starting(Link)
        /// The init packet was sent.
        case sendingInit(Link)
        /// The firmware's packets are going out.
        case receiving(Transfer)
        /// Validate was sent for the whole image.
        case validating(Link)
        /// Activate and reset was sent for the validated image.
        case activating(Activation)
        /// The bootloader reset into the validated image: a connection to the application shows that it runs.
        case verifying(Verification)
        /// The bootloader's reset was sent, to start the transfer again.
        case resetting
        case done
    }

    /// A connection to the bootloader during the transfer.
    struct Link: Equatable {
        /// The packet size the connection's MTU allows.
        let packetSize: Int
        /// The bootloader answered on this connection (a drop before its first answer may be the bonding trap).
        var answered = false
    }

    /// The firmware going out on `link`.
    struct Transfer: Equatable {
        var link: Link
        /// Image bytes sent.
        var sent = 0
    }

    /// Waiting for the bootloader's link.
    struct Reconnect: Equatable {
        /// Connection attempts that failed in a row.
        var failures = 0
    }

    /// The validated image is being activated.
    struct Activation: Equatable {
        /// Activate requests sent for it.
        var requests: Int
    }

    /// Waiting for the application's link after an activation.
    struct Verification: Equatable {
        /// Activate requests sent so far.
        let activations: Int
        /// Connection attempts that failed in a row.
        var failures = 0
    }

    let image: [UInt8]
    let initPacket: [UInt8]
    let options: NordicDFUOptions
    var state = State.idle
    var result: NordicDFUResult
    var budget = DFUBudget()

    static let responseTimer = TimerID("response")
    static let receiptTimer = TimerID("receipt")
    static let resetTimer = TimerID("reset")
    /// Stops what a step on the bootloader's link waits for, when that link is gone or never came.
    static let stopLinkTimers: [FlowAction] = [
        .cancelTimer(responseTimer), .cancelTimer(receiptTimer), .cancelTimer(resetTimer)
    ]

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
        case let .connectFailed(error): return connectFailed(error)
        case let .disconnected(reason): return disconnected(reason)
        case let .writeFailed(_, error):
            if case .characteristicNotFound = error { return fail(.noDFUService) }
            if case let .failed(_, message) = error, Self.isEncryptionFailure(message) {
                return fail(.bondingTrap(attempts: budget.silentDrops + 1))
            }
            return []
        case let .notification(ch, bytes):
            guard ch == NordicGATT.legacyControlPoint else { return [] }
            guard let n = try? LegacyDFUNotification(bytes: bytes) else {
                return fail(.unexpectedAnswer(step: step.name, bytes: bytes))
            }
            state.bootloaderAnswered()
            budget.silentDrops = 0
            return answer(n)
        case let .timerFired(id): return timerFired(id)
        }
    }

    static func isEncryptionFailure(_ message: String) -> Bool {
        let m = message.lowercased()
        return m.contains("authentication") || m.contains("encryption") || m.contains("insufficient")
    }

    private mutating func connected(_ info: ConnectionInfo, first: Bool) -> [FlowAction] {
        guard let target = NordicDFUTarget(info), !target.isSecure else { return fail(.noDFUService) }
        if target == .legacyApplication {
            if result.verified { return finish() }
            state = .entering
            return enterBootloader(
                writes: [
                    .write(NordicGATT.dfuControl, [0x01], .request), .startTimer(Self.resetTimer, options.entryTimeout)
                ])
        }
        let reached = bootloaderReached(first: first)
        if case let .verifying(verification) = state {
            // The validated image was not started: activate it again, or start over when the bootloader lost it.
            let activations = verification.activations + 1
            guard activations <= 2 else { return restart(.validatedImageNotStarted) }
            state = .activating(Activation(requests: activations))
            return [
                .subscribe(NordicGATT.legacyControlPoint),
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.activateAndReset.bytes, .request),
                .startTimer(Self.resetTimer, options.entryTimeout)
            ]
        }
        return reached + startTransfer(on: Link(packetSize: max(4, min(20, (info.mtu - 3) & ~3))))
    }

    private mutating func connectFailed(_ error: TransportError) -> [FlowAction] {
        switch state {
        case var .verifying(verification):
            // The bootloader advertises all the time: a board that no longer does runs its application
            // (one whose program keeps Bluetooth off does not advertise at all).
            verification.failures += 1
            guard verification.failures < 2 * options.reconnectAttempts else { return finish() }
            state = .verifying(verification)
            return [.connect(after: options.reconnectDelay, to: .application)]
        case var .reconnecting(reconnect):
            reconnect.failures += 1
            state = .reconnecting(reconnect)
            return connectAgain(after: error, failures: reconnect.failures)
        default:
            // Only a connection the flow asked for can fail: it was one to the bootloader. A
            // step that was still waiting on the old link leaves its timers behind.
            state = .reconnecting(Reconnect(failures: 1))
            return Self.stopLinkTimers + connectAgain(after: error, failures: 1)
        }
    }

    private mutating func disconnected(_ reason: DisconnectReason) -> [FlowAction] {
        let cancel = Self.stopLinkTimers
        switch state {
        case .idle, .done, .reconnecting, .verifying: return []
        case let .activating(activation):
            // The bootloader resets into the validated application; a new connection shows whether it runs.
            state = .verifying(Verification(activations: activation.requests))
            return cancel + [
                Self.report(.checkingApplication),
                .connect(after: options.reconnectDelay, to: .application)
            ]
        case .entering, .resetting:
            state = .reconnecting(Reconnect())
            return cancel + [.report(.phase(.connecting)), .connect(after: options.reconnectDelay, to: .bootloader)]
        case .starting, .sendingInit, .receiving, .validating:
            if state.link?.answered == false {
                budget.silentDrops += 1
                if budget.silentDrops >= 3 { return fail(.bondingTrap(attempts: budget.silentDrops)) }
            }
            let during = step
            state = .reconnecting(Reconnect())
            return linkLost(reason, during: during, cancelling: cancel, restartsTransfer: true)
        }
    }

    private mutating func timerFired(_ id: TimerID) -> [FlowAction] {
        switch (id, state) {
        case (Self.resetTimer, .entering), (Self.resetTimer, .resetting), (Self.resetTimer, .activating):
            // Nothing came back: close the link ourselves (the disconnect moves the flow on).
            return [.disconnect]
        case let (Self.receiptTimer, .receiving(transfer)):
            return restart(.noPacketReceipt(sent: transfer.sent))
        case (Self.responseTimer, .done), (Self.responseTimer, .reconnecting), (Self.responseTimer, .verifying):
            return []
        case (Self.responseTimer, _):
            budget.timeouts += 1
            guard budget.timeouts <= options.timeoutLimit else {
                return fail(.timedOut(step: step.name, attempts: budget.timeouts))
            }
            return restart(.noAnswer(to: step))
        default: return []
        }
    }

    /// The bootloader cannot resume: reset it (it comes back as "DfuTarg") and start again.
    mutating func restart(_ cause: LegacyRestartCause) -> [FlowAction] {
        budget.losses += 1
        result.retries += 1
        guard budget.losses <= options.linkLossLimit else {
            return fail(.checksumMismatch(step: "the firmware", attempts: budget.losses))
        }
        state = .resetting
        return [
            .cancelTimer(Self.responseTimer), .cancelTimer(Self.receiptTimer),
            Self.report(.transferRestarted(cause)),
            .write(NordicGATT.legacyControlPoint, LegacyDFURequest.reset.bytes, .request),
            .startTimer(Self.resetTimer, options.entryTimeout)
        ]
    }

    mutating func finish() -> [FlowAction] {
        state = .done
        outcome = .success(result)
        return Self.stopLinkTimers + [.report(.phase(.done)), .finish]
    }

    mutating func fail(_ error: NordicDFUError) -> [FlowAction] {
        state = .done
        outcome = .failure(error)
        return [.finish]
    }
}
