import Transport

/// Runs a `FlowMachine` over a real (or test) `BLETransport`, on an injected clock.
///
/// The driver is thin on purpose: everything the protocol decides lives in the
/// machine. The driver turns the machine's actions into transport calls and
/// feeds back what happened (notifications, timer firings, disconnects, connect
/// results) as events, one at a time, in the order they arrive.
///
/// Every `disconnect` action is answered by a `disconnected` event: the transport reports
/// the loss of a link that was up (and a link that went down before the flow started, see
/// `BLETransport.disconnects()`); for a link the machine already knows is down the driver
/// answers itself, so no machine waits for a loss that already happened.
///
/// A connection attempt runs beside the machine's timers: a machine that bounds how long it
/// looks for a board (`PartialFlashSettings.restartWindow`) may finish while the attempt still
/// waits, and the attempt is then abandoned. Its result arrives as a `connected` or
/// `connectFailed` event like any other.
public struct AsyncFlowDriver<C: Clock>: Sendable where C.Duration == Duration {
    public let transport: any BLETransport
    public let clock: C
    /// Limit for one transport call (a write, a subscribe, a connect).
    public let operationTimeout: Duration

    public init(transport: any BLETransport, clock: C, operationTimeout: Duration = .seconds(10)) {
        self.transport = transport
        self.clock = clock
        self.operationTimeout = operationTimeout
    }

    /// Runs `machine` on the live connection described by `connection` until it finishes.
    /// `onReport` receives the machine's reports with the elapsed time.
    /// Throws the machine's error, or `CancellationError` when the task is cancelled.
    public func run<M: FlowMachine>(
        _ machine: M, connection: ConnectionInfo,
        onReport: @escaping @Sendable (FlowReport, Duration) -> Void = { _, _ in }
    ) async throws -> M.Output {
        var machine = machine
        return try await run(&machine, connection: connection, onReport: onReport)
    }

    /// Runs `machine` as `run(_:connection:onReport:)` does, and leaves it as it ended: on a
    /// failure too, the caller can read what it did before it failed (`SessionFlow.progress`).
    public func run<M: FlowMachine>(
        _ machine: inout M, connection: ConnectionInfo,
        onReport: @escaping @Sendable (FlowReport, Duration) -> Void = { _, _ in }
    ) async throws -> M.Output {
        let start = clock.now
        // Unbounded, deliberately: the machine bounds what is in flight (one block of
        // 4 packets, or the SMP pipeline depth), so this buffer never grows past that.
        let (events, sink) = AsyncStream<Incoming>.makeStream(bufferingPolicy: .unbounded)
        var tasks = TaskSet()
        defer { tasks.cancelAll() }

        // Link losses, for as long as the flow runs.
        let disconnects = transport.disconnects()
        tasks.start(key: "disconnects") {
            for await reason in disconnects { sink.yield(.flow(.disconnected(reason))) }
        }
        // What the stack passed on that no board can send ends the run (see below).
        if let integrity = transport as? any StackIntegrityReporting {
            let violations = integrity.stackViolations()
            tasks.start(key: "violations") {
                for await violation in violations { sink.yield(.violation(violation)) }
            }
        }
        var pending: [FlowEvent] = [.start(connection)]
        var iterator = events.makeAsyncIterator()
        var timerGeneration = 0
        var liveTimers: [TimerID: Int] = [:]
        // True once the machine was told the link is down, until a connect succeeds.
        var linkDown = false
        while true {
            try Task.checkCancellation()
            let event: FlowEvent
            if !pending.isEmpty {
                event = pending.removeFirst()
            } else {
                switch await iterator.next() {
                case .flow(let e)?:
                    event = e
                case let .violation(text)?:
                    throw StackViolation(text)
                case let .thrown(error)?:
                    throw error
                case let .timer(id, generation)?:
                    // A timer cancelled or restarted after it fired is stale: drop it.
                    guard liveTimers[id] == generation else { continue }
                    liveTimers[id] = nil
                    event = .timerFired(id)
                case nil:
                    throw CancellationError()
                }
            }
            // A stack that passed on something no board can send (and the transport dropped)
            // ends the run now: the answers the flow waits for may be what was dropped.
            if let violation = (transport as? any StackIntegrityReporting)?.stackViolation {
                throw StackViolation(violation)
            }
            switch event {
            case .disconnected: linkDown = true
            case .connected, .start: linkDown = false
            default: break
            }
            let now = start.duration(to: clock.now)
            for action in machine.handle(event, now: now) {
                switch action {
                case let .write(characteristic, bytes, .command):
                    // Commands are not acknowledged by the board; the stack's acceptance is
                    // not waited for either, so the packets of a block leave back to back
                    // (a refusal that comes later arrives as `writeFailed`).
                    do {
                        try await transport.enqueueCommand(bytes, to: characteristic, timeout: operationTimeout) {
                            error in
                            sink.yield(.flow(.writeFailed(characteristic, error)))
                        }
                    } catch let error as TransportError {
                        pending.append(.writeFailed(characteristic, error))
                    }
                case let .write(characteristic, bytes, kind):
                    do {
                        try await transport.write(bytes, to: characteristic, kind: kind, timeout: operationTimeout)
                    } catch let error as TransportError {
                        pending.append(.writeFailed(characteristic, error))
                    }
                case let .subscribe(characteristic):
                    let stream = transport.notifications(of: characteristic)
                    tasks.start(key: "notify:\(characteristic.characteristic)") {
                        for await value in stream { sink.yield(.flow(.notification(characteristic, value))) }
                    }
                    do {
                        try await transport.enableNotifications(characteristic, timeout: operationTimeout)
                    } catch let error as TransportError {
                        pending.append(.writeFailed(characteristic, error))
                    }
                case let .startTimer(id, after):
                    timerGeneration += 1
                    let generation = timerGeneration
                    liveTimers[id] = generation
                    let clock = self.clock
                    tasks.start(key: "timer:\(id.name)") {
                        do {
                            try await clock.sleep(for: after)
                            sink.yield(.timer(id, generation))
                        } catch {}
                    }
                case let .cancelTimer(id):
                    liveTimers[id] = nil
                    tasks.cancel(key: "timer:\(id.name)")
                case .disconnect:
                    await transport.disconnect()
                    // The loss of a link that was up comes from the transport; a machine that
                    // asks to close a link it was told is down gets that answer at once.
                    if linkDown { pending.append(.disconnected(.localTerminated)) }
                case let .connect(after, target):
                    let transport = self.transport, clock = self.clock, timeout = operationTimeout
                    tasks.start(key: "connect") {
                        if after > .zero {
                            do { try await clock.sleep(for: after) } catch { return }
                        }
                        do {
                            let info = try await transport.connect(to: target, timeout: timeout)
                            sink.yield(.flow(.connected(info)))
                        } catch let error as TransportError {
                            sink.yield(.flow(.connectFailed(error)))
                        } catch is CancellationError {
                            // The machine finished while the attempt waited.
                        } catch {
                            sink.yield(.thrown(error))
                        }
                    }
                case let .report(report):
                    onReport(report, now)
                case .finish:
                    guard let outcome = machine.outcome else {
                        throw FlowCompositionError.finishedWithoutOutcome(scope: String(describing: M.self))
                    }
                    return try outcome.get()
                }
            }
        }
    }
}

/// What the driver's background tasks report.
private enum Incoming: Sendable {
    case flow(FlowEvent)
    case timer(TimerID, Int)
    /// The transport's stack passed on something no board can send.
    case violation(String)
    /// An error a transport call threw that is not the transport's (ends the run).
    case thrown(any Error)
}

/// The driver's background tasks, by key; starting a key again replaces its task.
/// Local to one `run`, so never shared between tasks.
private struct TaskSet {
    private var tasks: [String: Task<Void, Never>] = [:]

    mutating func start(key: String, _ body: @escaping @Sendable () async -> Void) {
        tasks[key]?.cancel()
        tasks[key] = Task { await body() }
    }

    mutating func cancel(key: String) {
        tasks.removeValue(forKey: key)?.cancel()
    }

    mutating func cancelAll() {
        for task in tasks.values { task.cancel() }
        tasks.removeAll()
    }
}
