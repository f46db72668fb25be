import Diagnostics
import LinkModel
import PartialFlashingFrames
import Transport

/// Driving the flows: the event loop, delivering events, performing actions.
extension Simulation {
    mutating func loop(until end: VirtualInstant) {
        while let next = queue.first {
            if jobs.allSatisfy(\.finished) { return }
            if next.time > end {
                now = end
                return
            }
            guard let entry = queue.pop() else { return }
            now = entry.time
            process(entry.payload)
        }
    }

    mutating func process(_ event: SimEvent) {
        switch event {
        case let .machine(job, e): deliver(e, to: job)
        case let .connectionEvent(c): connectionEvent(c)
        case let .toBoard(c, body): arriveAtBoard(c, body)
        case let .toClient(c, ch, bytes, copy): arriveAtClient(c, ch, bytes, copy: copy)
        case let .linkLoss(c): loseLink(c)
        case let .localDisconnect(c): closeLocally(c)
        case let .clientDisconnected(job, c, reason):
            guard jobs.indices.contains(job), jobs[job].connection == c else { return }
            jobs[job].connection = nil
            trace.record(t, board: jobs[job].board, .disconnect, "the flow sees the link drop: \(reason)")
            deliver(.disconnected(reason), to: job)
        case let .connectAttempt(job, startedAt, initial):
            attemptConnection(job, startedAt: startedAt, initial: initial)
        case let .connectEstablished(job, b, epoch, initial): establish(job, board: b, epoch: epoch, initial: initial)
        case let .creationStart(a): startCreation(adapter: a)
        case let .deviceWork(b, epoch, service, tag): deviceWork(b, epoch: epoch, service: service, tag: tag)
        case let .boardBoot(b, epoch): boot(b, epoch: epoch)
        case let .deviceReset(b):
            guard boards[b].downUntil == nil else { return }
            stats.faults.deviceResets += 1
            trace.record(t, board: b, .fault, "device reset (scheduled)")
            reboot(b)
        case let .pairingTimeout(b, epoch):
            guard boards[b].epoch == epoch, boards[b].downUntil == nil else { return }
            // The timeout is counted by the pairing-mode fiber (`MicroBitBLEManager::pairingMode`),
            // which a hung flash operation starves: it never fires (`DeviceState.fiberStarved`).
            guard !boards[b].board.device.fiberStarved else {
                trace.record(t, board: b, .device, "pairing-mode timeout does not fire: the fibers starve")
                return
            }
            stats.faults.deviceResets += 1
            trace.record(t, board: b, .fault, "pairing-mode timeout: the board resets")
            reboot(b)
        case .linkLossAt:
            for (id, c) in connections.sorted(by: { $0.key < $1.key }) where c.alive {
                trace.record(t, board: c.board, .fault, "link lost (scheduled)")
                loseLink(id)
            }
        case let .timer(job, id, generation):
            guard jobs.indices.contains(job), jobs[job].timers[id] == generation else { return }
            jobs[job].timers[id] = nil
            trace.record(t, board: jobs[job].board, .timer, "\(id) fired")
            deliver(.timerFired(id), to: job)
        }
    }

    mutating func beginJob(_ j: Int) {
        trace.record(t, board: jobs[j].board, .connect, "connecting (setup \(link.connectionSetup.secondsText))")
        queue.schedule(.connectAttempt(job: j, startedAt: now, initial: true), at: now)
    }

    mutating func finishJob(_ j: Int, error: (any Error)? = nil) {
        guard !jobs[j].finished else { return }
        jobs[j].finished = true
        jobs[j].finishedAt = now
        jobs[j].error = error
        let board = jobs[j].board
        if let e = error {
            trace.record(t, board: board, .error, "\(e)")
        } else {
            trace.record(t, board: board, .finish, "flow finished")
        }
        // The session ends: close its link without telling the flow.
        if let c = jobs[j].connection, connections[c]?.alive == true {
            dropConnection(c)
        }
        jobs[j].connection = nil
        releaseAdapter(of: j)
    }

    /// Feeds one event to a flow and performs its actions, in order.
    mutating func deliver(_ event: FlowEvent, to j: Int) {
        guard jobs.indices.contains(j), !jobs[j].finished else { return }
        let elapsed = now - runStart
        trace.record(t, board: jobs[j].board, .input, RecordedEvent.encode(event))
        let actions = jobs[j].machine.handle(event, now: elapsed)
        for action in actions {
            guard !jobs[j].finished else { return }
            perform(action, for: j)
        }
    }

    mutating func perform(_ action: FlowAction, for j: Int) {
        let b = jobs[j].board
        switch action {
        case let .write(ch, bytes, kind):
            handOver(.write(ch, bytes, kind), for: j)
        case let .subscribe(ch):
            handOver(.subscribe(ch), for: j)
        case let .startTimer(id, d):
            jobs[j].timerGeneration += 1
            jobs[j].timers[id] = jobs[j].timerGeneration
            trace.record(t, board: b, .timer, "start \(id) \(d.secondsText)")
            queue.schedule(.timer(job: j, id, generation: jobs[j].timerGeneration), at: now + d)
        case let .cancelTimer(id):
            jobs[j].timers[id] = nil
        case .disconnect:
            trace.record(t, board: b, .disconnect, Self.closeText)
            guard let c = jobs[j].connection, let conn = connections[c], conn.alive, !conn.closing else {
                queue.schedule(.machine(job: j, .disconnected(.localTerminated)), at: now)
                return
            }
            connections[c]?.closing = true
            queue.schedule(.localDisconnect(conn: c), at: conn.schedule.firstEvent(after: now))
        case let .connect(after, target):
            // One simulated board plays its application and its bootloader: every target is the board.
            trace.record(t, board: b, .connect, "connect after \(after.secondsText)\(Self.targetText(target))")
            queue.schedule(.connectAttempt(job: j, startedAt: now + after, initial: false), at: now + after)
        case let .report(r):
            trace.record(t, board: b, .report, Self.text(of: r, words: reportWords))
            onReport?(BoardID(index: b), r, now - runStart)
        case .finish:
            finishJob(j)
        }
    }

    /// Runs the boards' pending work after the flows ended; everything else is dropped.
    /// Work of an earlier epoch (before a reset) is void and does not move the clock.
    mutating func settleBoards() {
        func keepCurrent() {
            let epochs = boards.map(\.epoch)
            queue.filter { event in
                switch event {
                case let .deviceWork(b, epoch, _, _), let .boardBoot(b, epoch):
                    return epochs.indices.contains(b) && epochs[b] == epoch
                default: return false
                }
            }
        }
        keepCurrent()
        while let entry = queue.pop() {
            now = max(now, entry.time)
            process(entry.payload)
            keepCurrent()
        }
        for (id, c) in connections where c.alive { dropConnection(id) }
        connections = [:]
    }

    /// The trace text of the flow's own `disconnect`.
    static let closeText = "flow closes the link"

    /// How a trace line names a connect target (nothing for the same device, as before targets existed).
    static func targetText(_ target: ConnectTarget) -> String {
        switch target {
        case .sameDevice: return ""
        case .bootloader: return " to the bootloader"
        case .application: return " to the application"
        }
    }

    /// A report as the trace records it; a typed report in `words` (the presenter's, set by
    /// whoever runs the session), else as Swift prints the value.
    static func text(of report: FlowReport, words: (@Sendable (AnyFlowReport) -> String)?) -> String {
        switch report {
        case let .phase(p): return "phase: \(p.rawValue)"
        case let .progress(done, total, unit): return "progress: \(done)/\(total) \(unit.rawValue)"
        case let .retry(s): return "retry: \(s)"
        case let .trace(s): return "trace: \(s)"
        case let .note(s): return "note: \(s)"
        case let .decision(code, s): return "decision: \(code): \(s)"
        case let .flow(r) where r.kind == .decision:
            return "decision: \(r.decisionCode ?? ""): \(words?(r) ?? r.description)"
        case let .flow(r): return "\(r.kind.rawValue): \(words?(r) ?? r.description)"
        case let .checkpoint(checkpoint):
            guard let checkpoint else { return "checkpoint: nothing to resume" }
            guard let p = checkpoint.resumePoint else { return "checkpoint: \(checkpoint)" }
            return
                "checkpoint: resume at block \(p.block + 1)/\(p.blockCount) (\(Hex.number(p.address))), \(p.acknowledged) acknowledged"
        }
    }

    mutating func schedulePairingTimeout(_ b: Int) {
        guard let timeout = faults.pairingModeTimeout else { return }
        queue.schedule(.pairingTimeout(board: b, epoch: boards[b].epoch), at: now + timeout)
    }
}
