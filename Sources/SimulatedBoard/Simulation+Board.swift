import LinkModel
import Transport

/// The boards' side: connecting, device work, resets and boots.
extension Simulation {
    /// A connection attempt: refused by a fault, waiting for a rebooting board, failing after
    /// the connect timeout for a board that does not advertise, or set up after `connectionSetup`.
    mutating func attemptConnection(_ j: Int, startedAt: VirtualInstant, initial: Bool) {
        guard jobs.indices.contains(j), !jobs[j].finished else { return }
        let b = jobs[j].board
        func fail(_ why: String, at time: VirtualInstant) {
            if initial {
                finishJob(
                    j,
                    error: SimulatedBoardError.notConnectable(
                        board: boards[b].board.profile.board.displayName, reason: why))
            } else {
                trace.record(t, board: b, .connect, "connection attempt fails: \(why)")
                queue.schedule(.machine(job: j, .connectFailed(.connectFailed(why))), at: time)
            }
        }
        if !initial && now == startedAt {
            if let c = jobs[j].connection, connections[c]?.alive == true, let info = connectionInfo(c) {
                queue.schedule(.machine(job: j, .connected(info)), at: now)
                return
            }
            let attempt = jobs[j].connectAttempts
            jobs[j].connectAttempts += 1
            if faults.refuseConnectionAttempts.contains(attempt) || rng.chance(faults.refuseConnection) {
                stats.faults.refusedConnections += 1
                trace.record(t, board: b, .fault, "connection attempt \(attempt) refused")
                return fail("le-connection-abort-by-local", at: now + link.connectionSetup)
            }
        }
        if let up = boards[b].downUntil {
            if up - startedAt <= link.connectTimeout {
                queue.schedule(.connectAttempt(job: j, startedAt: startedAt, initial: initial), at: max(up, now))
            } else {
                fail(
                    "the board did not advertise within \(link.connectTimeout.secondsText)",
                    at: startedAt + link.connectTimeout)
            }
            return
        }
        guard boards[b].connection == nil else { return fail("the board is connected to another central", at: now) }
        guard boards[b].board.isConnectable else {
            let why =
                "the board is in application mode and its program does not use Bluetooth: "
                + "put it into pairing mode (A+B + reset, or press reset three times)"
            return fail(why, at: startedAt + link.connectTimeout)
        }
        requestCreation(j, board: b, initial: initial)
    }

    mutating func establish(_ j: Int, board b: Int, epoch: Int, initial: Bool) {
        guard jobs.indices.contains(j), !jobs[j].finished else { return }
        guard boards[b].epoch == epoch, boards[b].downUntil == nil, boards[b].connection == nil,
            boards[b].board.isConnectable
        else {
            // The board went away during setup: try again from the start.
            queue.schedule(.connectAttempt(job: j, startedAt: now, initial: initial), at: now)
            return
        }
        if let why = refusalForLimit(j) {
            if initial {
                finishJob(
                    j,
                    error: SimulatedBoardError.notConnectable(
                        board: boards[b].board.profile.board.displayName, reason: why))
            } else {
                queue.schedule(.machine(job: j, .connectFailed(.connectFailed(why))), at: now)
            }
            return
        }
        let id = nextConnectionID
        nextConnectionID += 1
        let board = boards[b].board
        connections[id] = Connection(
            id: id, board: b, job: j, adapter: jobs[j].adapter,
            schedule: ConnectionSchedule(anchor: now, interval: link.connectionIntervalMicroseconds),
            mtu: min(link.attMTU, board.attMTU), dataLength: min(link.dataLength, board.dataLength))
        boards[b].connection = id
        jobs[j].connection = id
        stats.connections += 1
        notePeak(on: jobs[j].adapter)
        guard let info = connectionInfo(id) else { return }
        trace.record(t, board: b, .connect, "connected (conn \(id), MTU \(info.mtu), mode \(boards[b].board.mode))")
        deliver(initial ? .start(info) : .connected(info), to: j)
    }

    func connectionInfo(_ c: Int) -> ConnectionInfo? {
        guard let conn = connections[c] else { return nil }
        var info = boards[conn.board].board.connectionInfo(centralMTU: conn.mtu)
        info.connectionInterval = link.connectionInterval
        return info
    }

    func makeEffects(_ b: Int) -> ServiceEffects {
        var effects = ServiceEffects(
            now: now, timing: boards[b].timing, rng: rng, slowErase: faults.slowErase,
            slowEraseFactor: faults.slowEraseFactor, flashOperationError: faults.flashOperationError)
        effects.flashOperationIndex = flashOperations
        effects.failingFlashOperations = faults.flashOperationErrorAt
        return effects
    }

    /// Carries out what a service asked for.
    mutating func apply(_ effects: ServiceEffects, board b: Int, service: Int? = nil) {
        rng = effects.rng
        flashOperations = effects.flashOperationIndex
        stats.faults.slowErases += effects.slowErases
        if effects.slowErases > 0 { trace.record(t, board: b, .fault, "slow page erase") }
        stats.faults.flashOperationErrors += effects.flashOperationErrors
        if effects.flashOperationErrors > 0 {
            trace.record(t, board: b, .fault, "a flash operation ends with NRF_EVT_FLASH_OPERATION_ERROR")
        }
        for note in effects.notes { trace.record(t, board: b, .device, note) }
        for n in effects.notifications {
            guard let c = boards[b].connection, let conn = connections[c], conn.alive,
                conn.subscribed.contains(n.characteristic)
            else {
                trace.record(t, board: b, .notify, "\(n.bytes.hexString) not sent: no subscribed client")
                continue
            }
            // The one `sd_ble_gatts_hvx` call fails with NRF_ERROR_RESOURCES while the queue holds
            // a notification that has not left yet, and the board ignores the failure (see
            // `SimulatedBoard.notificationQueueSlots`): the notification is lost.
            if let slots = boards[b].board.notificationQueueSlots, conn.queuedNotifications >= slots {
                stats.notificationsLostQueueFull += 1
                trace.record(t, board: b, .notify, "\(n.bytes.hexString) not sent: the notification queue is full")
                continue
            }
            trace.record(t, board: b, .notify, n.bytes.hexString)
            sendFromBoard(c, .notification(n.characteristic, n.bytes, copy: false), value: n.bytes.count)
        }
        if let serviceIndex = service {
            for w in effects.work {
                queue.schedule(
                    .deviceWork(board: b, epoch: boards[b].epoch, service: serviceIndex, tag: w.tag), at: now + w.delay)
            }
        }
        if effects.rebootRequested {
            reboot(b)
        } else if effects.disconnectRequested, let c = boards[b].connection, let conn = connections[c] {
            trace.record(t, board: b, .disconnect, "the board disconnects the central")
            dropConnection(c)
            queue.schedule(
                .clientDisconnected(job: conn.job, conn: c, .remoteTerminated),
                at: conn.schedule.firstEvent(after: now))
        }
    }

    mutating func deviceWork(_ b: Int, epoch: Int, service: Int, tag: Int) {
        guard boards[b].epoch == epoch, boards[b].downUntil == nil else { return }
        var effects = makeEffects(b)
        boards[b].board.workDone(service: service, tag: tag, effects: &effects)
        apply(effects, board: b, service: service)
    }

    /// The board resets: the link drops (the flow sees `remoteTerminated` at the next
    /// connection event), pending work is void, and it boots after its reboot time.
    mutating func reboot(_ b: Int) {
        boards[b].epoch += 1
        let board = boards[b].board
        let up = now + boards[b].timing.reboot + board.bootloaderTime(timing: boards[b].timing) + board.bootDecisionTime
        boards[b].downUntil = up
        trace.record(t, board: b, .reboot, "the board resets, back at \((up - runStart).secondsText)")
        if let c = boards[b].connection, let conn = connections[c] {
            dropConnection(c)
            queue.schedule(
                .clientDisconnected(job: conn.job, conn: c, .remoteTerminated),
                at: conn.schedule.firstEvent(after: now))
        }
        queue.schedule(.boardBoot(board: b, epoch: boards[b].epoch), at: up)
    }

    mutating func boot(_ b: Int, epoch: Int) {
        guard boards[b].epoch == epoch else { return }
        boards[b].downUntil = nil
        boards[b].board.reset()
        let board = boards[b].board
        if board.device.nordic.bootloaderActive {
            trace.record(t, board: b, .boot, "booted into the Nordic bootloader (\"DfuTarg\")")
            return
        }
        trace.record(
            t, board: b, .boot, "booted in \(board.mode) mode\(board.flashIncomplete ? " (flashIncomplete set)" : "")")
        if board.mode == .pairing { schedulePairingTimeout(b) }
    }
}
