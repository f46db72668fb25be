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
        if case let .write(_, bytes, kind) = body {
            stats.writes += 1
            trace.record(t, board: b, .write, "\(kind.rawValue) \(bytes.hexString)")
        } else {
            trace.record(t, board: b, .subscribe, "\(ch.characteristic)")
        }
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
        let pdu = OutPDU(body: body, handedAt: now, fragments: AirTime.fragments(bytes: bytes, dataLength: conn.dataLength))
        connections[c]?.peripheral.append(pdu)
        ensureEvent(c)
    }

    mutating func ensureEvent(_ c: Int) {
        guard let conn = connections[c], conn.alive, conn.pendingEvent == nil else { return }
        let at = conn.schedule.firstEvent(after: now)
        connections[c]?.pendingEvent = at
        queue.schedule(.connectionEvent(conn: c), at: at)
    }

    /// One connection event: up to `packetsPerEvent` packets each way, then the next event
    /// if anything is left.
    mutating func connectionEvent(_ c: Int) {
        guard var conn = connections[c], conn.alive else { return }
        let start = radio.start(plannedAt: now)
        if start > now {
            connections[c]?.pendingEvent = start
            queue.schedule(.connectionEvent(conn: c), at: start)
            return
        }
        conn.pendingEvent = nil
        var up: [Int] = [], down: [Int] = []
        var upDone: [(slot: Int, body: OutPDU.Body)] = [], downDone: [(slot: Int, body: OutPDU.Body)] = []
        while up.count < link.packetsPerEvent, let first = conn.central.first, first.handedAt < start {
            up.append(first.fragments[0])
            conn.central[0].fragments.removeFirst()
            if conn.central[0].fragments.isEmpty {
                upDone.append((up.count - 1, first.body))
                conn.central.removeFirst()
            }
        }
        while down.count < link.packetsPerEvent, let first = conn.peripheral.first, first.handedAt < start {
            if case .notification = first.body, !first.delayed, first.fragments.count == 1,
               rng.chance(faults.delayNotification) {
                stats.faults.delayedNotifications += 1
                trace.record(t, board: conn.board, .fault, "notification delayed")
                var held = conn.peripheral.removeFirst()
                held.delayed = true
                if conn.peripheral.first.map({ $0.handedAt < start }) == true {
                    conn.peripheral.insert(held, at: 1)
                } else {
                    held.handedAt = start
                    conn.peripheral.insert(held, at: 0)
                    break
                }
                continue
            }
            down.append(first.fragments[0])
            conn.peripheral[0].fragments.removeFirst()
            if conn.peripheral[0].fragments.isEmpty {
                downDone.append((down.count - 1, first.body))
                conn.peripheral.removeFirst()
            }
        }
        // Air time and delivery times, exchange by exchange.
        var cursor = start.microseconds
        var upEnd: [Int64] = [], downEnd: [Int64] = []
        for i in 0..<max(up.count, down.count, 1) {
            let cBytes = i < up.count ? up[i] : 0, pBytes = i < down.count ? down[i] : 0
            cursor += AirTime.packet(payload: cBytes)
            upEnd.append(cursor)
            cursor += AirTime.interFrameSpace + AirTime.packet(payload: pBytes)
            downEnd.append(cursor)
            cursor += AirTime.interFrameSpace
        }
        radio.reserve(from: start, airTime: cursor - start.microseconds, connection: c)
        stats.connectionEvents += 1
        stats.centralPackets += up.count
        stats.centralBytes += up.reduce(0, +)
        stats.peripheralPackets += down.count
        stats.peripheralBytes += down.reduce(0, +)
        trace.record(t, board: conn.board, .event,
                     "conn \(c): \(up.count) up, \(down.count) down, air \(cursor - start.microseconds) us")
        connections[c] = conn
        for (slot, body) in upDone {
            queue.schedule(.toBoard(conn: c, body), at: VirtualInstant(microseconds: upEnd[slot]))
        }
        for (slot, body) in downDone {
            if case let .notification(ch, bytes, copy) = body {
                queue.schedule(.toClient(conn: c, ch, bytes, copy: copy), at: VirtualInstant(microseconds: downEnd[slot]))
            }
        }
        if !conn.central.isEmpty || !conn.peripheral.isEmpty { ensureEvent(c) }
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
            if rng.chance(faults.dropWrite) {
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
        if rng.chance(faults.dropNotification) {
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
        queue.schedule(.clientDisconnected(job: conn.job, conn: c, .supervisionTimeout), at: now + link.supervisionTimeout)
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
        if boards[conn.board].connection == c { boards[conn.board].connection = nil }
    }
}
