import LinkModel
import Transport

/// The link: handing PDUs to the stack, connection events, deliveries, link loss.
extension Simulation {
    /// A flow hands a write or a subscription to the link.
    mutating func handOver(_ body: OutPDU.Body, for j: Int) {
        let b = jobs[j].board
        let ch: GATTCharacteristic
        let value: Int
        let operation: String
        switch body {
        case let .write(c, bytes, _): ch = c; value = bytes.count; operation = "write"
        case let .subscribe(c): ch = c; value = 2; operation = "subscribe"
        default: return
        }
        // Every write the flow asks for is recorded, also one that fails (a replay compares them).
        if case let .write(_, bytes, kind) = body {
            trace.record(t, board: b, .write, "\(kind.rawValue) \(bytes.hexString)")
        } else {
            trace.record(t, board: b, .subscribe, "\(ch.characteristic)")
        }
        func fail(_ e: TransportError) {
            trace.record(t, board: b, .writeFailed, "\(ch.characteristic): \(e)")
            queue.schedule(.machine(job: j, .writeFailed(ch, e)), at: now)
        }
        guard let c = jobs[j].connection, let conn = connections[c], !conn.closing else {
            return fail(.notConnected(operation: operation))
        }
        guard boards[b].board.serviceIndex(of: ch) != nil else { return fail(.characteristicNotFound(ch)) }
        guard value <= conn.mtu - 3 else {
            return fail(.failed(operation: operation, message: "\(value) bytes do not fit the ATT MTU of \(conn.mtu)"))
        }
        if case .write = body { stats.writes += 1 }
        guard conn.alive else {
            trace.record(t, board: b, .lost, "written into a link that is already gone")
            return
        }
        let fragments = AirTime.fragments(bytes: AirTime.writePDU(value: value), dataLength: conn.dataLength)
        connections[c]?.central.append(OutPDU(body: body, handedAt: now, fragments: fragments))
        ensureEvent(c)
    }

    /// The board hands a PDU to its stack.
    mutating func sendFromBoard(_ c: Int, _ body: OutPDU.Body, value: Int) {
        guard let conn = connections[c], conn.alive else { return }
        let bytes = value == 0 ? 5 : AirTime.writePDU(value: value)
        let pdu = OutPDU(
            body: body, handedAt: now, fragments: AirTime.fragments(bytes: bytes, dataLength: conn.dataLength))
        connections[c]?.peripheral.append(pdu)
        ensureEvent(c)
    }

    mutating func ensureEvent(_ c: Int) {
        guard let conn = connections[c], conn.alive, conn.pendingEvent == nil else { return }
        let at = conn.schedule.firstEvent(after: now)
        connections[c]?.pendingEvent = at
        queue.schedule(.connectionEvent(conn: c), at: at)
    }

    /// A write (or CCCD write) reaches the board, unless a fault takes it.
    mutating func arriveAtBoard(_ c: Int, _ body: OutPDU.Body) {
        guard let conn = connections[c], conn.alive else { return }
        let b = conn.board
        switch body {
        case let .subscribe(ch):
            connections[c]?.subscribed.insert(ch)
            trace.record(t, board: b, .received, "notifications enabled on \(ch.characteristic)")
            sendFromBoard(c, .response, value: 0)
        case let .write(ch, bytes, kind):
            let index = jobs[conn.job].writesOnAir
            jobs[conn.job].writesOnAir += 1
            if faults.disconnectAtWrite.contains(index) || rng.chance(faults.disconnectPerWrite) {
                trace.record(t, board: b, .fault, "link lost at write \(index)")
                return loseLink(c)
            }
            if faults.dropWriteAt.contains(index) || rng.chance(faults.dropWrite) {
                stats.faults.droppedWrites += 1
                trace.record(t, board: b, .fault, "write \(index) lost: \(bytes.hexString)")
                return
            }
            trace.record(t, board: b, .received, bytes.hexString)
            var effects = makeEffects(b)
            let service = boards[b].board.write(bytes, to: ch, kind: kind, effects: &effects)
            if kind == .request { sendFromBoard(c, .response, value: 0) }
            apply(effects, board: b, service: service)
        case .notification, .response:
            return
        }
    }

    /// A notification reaches the flow, unless a fault takes or doubles it.
    mutating func arriveAtClient(_ c: Int, _ ch: GATTCharacteristic, _ bytes: [UInt8], copy: Bool) {
        guard let conn = connections[c], conn.alive else { return }
        let index = jobs[conn.job].notificationsOnAir
        jobs[conn.job].notificationsOnAir += 1
        if faults.dropNotificationAt.contains(index) || rng.chance(faults.dropNotification) {
            stats.faults.droppedNotifications += 1
            trace.record(t, board: conn.board, .fault, "notification lost: \(bytes.hexString)")
            return
        }
        if !copy, rng.chance(faults.duplicateNotification) {
            stats.faults.duplicatedNotifications += 1
            trace.record(t, board: conn.board, .fault, "notification duplicated: \(bytes.hexString)")
            sendFromBoard(c, .notification(ch, bytes, copy: true), value: bytes.count)
        }
        stats.notificationsReceived += 1
        trace.record(t, board: conn.board, .notification, bytes.hexString)
        deliver(.notification(ch, bytes), to: conn.job)
    }

    /// The link is gone without a word: the board sees it at once, the flow after the
    /// supervision timeout.
    mutating func loseLink(_ c: Int) {
        guard let conn = connections[c], conn.alive else { return }
        stats.faults.disconnects += 1
        dropConnection(c)
        queue.schedule(
            .clientDisconnected(job: conn.job, conn: c, .supervisionTimeout), at: now + link.supervisionTimeout)
    }

    /// The flow's own disconnect takes effect in the next connection event.
    mutating func closeLocally(_ c: Int) {
        guard let conn = connections[c], conn.alive else { return }
        dropConnection(c)
        trace.record(t, board: conn.board, .disconnect, "link closed by this computer")
        if jobs.indices.contains(conn.job), jobs[conn.job].connection == c { jobs[conn.job].connection = nil }
        deliver(.disconnected(.localTerminated), to: conn.job)
    }

    /// Ends a connection on both sides' link layers (no event to the flow).
    mutating func dropConnection(_ c: Int) {
        guard let conn = connections[c] else { return }
        connections[c]?.alive = false
        connections[c]?.central = []
        connections[c]?.peripheral = []
        if boards[conn.board].connection == c {
            boards[conn.board].connection = nil
            boards[conn.board].board.linkDropped()
        }
    }
}
