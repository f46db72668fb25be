import LinkModel
import Transport

/// Connection events: which packets go on air, when they arrive, how long the radio is busy.
extension Simulation {
    /// One connection event. Exchange by exchange, the central sends its next eligible packet
    /// (handed over before the event started) or an empty one, and the board answers with
    /// its next eligible packet or an empty one; at most `packetsPerEvent` exchanges, and no
    /// more than fit before the connection's next event. Then the next event, if anything is left.
    mutating func connectionEvent(_ c: Int) {
        guard var conn = connections[c], conn.alive else { return }
        let start = radios[conn.adapter].start(plannedAt: now)
        if start > now {
            // Another connection holds the radio: this event is pushed back until it is free.
            connections[c]?.pendingEvent = start
            queue.schedule(.connectionEvent(conn: c), at: start)
            return
        }
        conn.pendingEvent = nil
        let ifs = AirTime.interFrameSpace
        if let silentUntil = boards[conn.board].board.radioSilent(at: start) {
            // The board's chip is erasing a page (`SecureDFUFlashQueue`): it misses the event.
            // The central sends its first packet, hears nothing and sends it again in the
            // first event after the erase; nothing is lost on the link layer.
            let up = conn.central.first.flatMap { $0.handedAt < start ? $0.fragments.first : nil } ?? 0
            radios[conn.adapter].reserve(from: start, airTime: AirTime.packet(payload: up) + ifs, connection: c)
            trace.record(t, board: conn.board, .event, "conn \(c): missed, the board is erasing flash")
            let next = conn.schedule.firstEvent(after: silentUntil.advanced(byMicroseconds: -1))
            conn.pendingEvent = next
            connections[c] = conn
            queue.schedule(.connectionEvent(conn: c), at: next)
            return
        }
        let limit = start.microseconds + max(conn.schedule.interval - ifs, AirTime.exchange(central: 0, peripheral: 0))
        var cursor = start.microseconds
        var exchanges = 0, upBytes = 0, downBytes = 0, upCount = 0, downCount = 0
        var arrivals: [(time: Int64, event: SimEvent)] = []
        var peripheralHeld = false
        while exchanges < link.packetsPerEvent {
            reorderNotificationIfFaulted(&conn, eventStart: start)
            if !peripheralHeld { peripheralHeld = holdsNotificationsBackIfFaulted(&conn, eventStart: start) }
            let up = conn.central.first.flatMap { $0.handedAt < start ? $0.fragments.first : nil }
            let down =
                peripheralHeld ? nil : conn.peripheral.first.flatMap { $0.handedAt < start ? $0.fragments.first : nil }
            if up == nil && down == nil { break }
            let upAir = AirTime.packet(payload: up ?? 0)
            let exchange = upAir + ifs + AirTime.packet(payload: down ?? 0) + ifs
            if exchanges > 0 && cursor + exchange > limit { break }
            if let size = up {
                upCount += 1
                upBytes += size
                conn.central[0].fragments.removeFirst()
                if conn.central[0].fragments.isEmpty {
                    let pdu = conn.central.removeFirst()
                    arrivals.append((cursor + upAir, .toBoard(conn: c, pdu.body)))
                }
            }
            if let size = down {
                downCount += 1
                downBytes += size
                conn.peripheral[0].fragments.removeFirst()
                if conn.peripheral[0].fragments.isEmpty {
                    let pdu = conn.peripheral.removeFirst()
                    if case let .notification(ch, bytes, copy) = pdu.body {
                        arrivals.append((cursor + exchange - ifs, .toClient(conn: c, ch, bytes, copy: copy)))
                    }
                }
            }
            cursor += exchange
            exchanges += 1
        }
        if exchanges == 0 { cursor += AirTime.exchange(central: 0, peripheral: 0) }
        radios[conn.adapter].reserve(from: start, airTime: cursor - start.microseconds, connection: c)
        stats.connectionEvents += 1
        stats.centralPackets += upCount
        stats.centralBytes += upBytes
        stats.peripheralPackets += downCount
        stats.peripheralBytes += downBytes
        trace.record(
            t, board: conn.board, .event,
            "conn \(c): \(upCount) up, \(downCount) down, air \(cursor - start.microseconds) us")
        connections[c] = conn
        for a in arrivals { queue.schedule(a.event, at: VirtualInstant(microseconds: a.time)) }
        if !conn.central.isEmpty || !conn.peripheral.isEmpty { ensureEvent(c) }
    }

    /// The delay fault: the board's next notification does not get through in this event (the
    /// link layer sends a packet again until it is acknowledged), so the board sends nothing more
    /// in this event and the notification leaves first in the next one, everything queued
    /// behind it after it: late, in order. Each notification is delayed at most once.
    private mutating func holdsNotificationsBackIfFaulted(_ conn: inout Connection, eventStart start: VirtualInstant)
        -> Bool
    {
        guard let first = conn.peripheral.first, first.handedAt < start, !first.delayed,
            case .notification = first.body, first.fragments.count == 1,
            rng.chance(faults.delayNotification)
        else { return false }
        stats.faults.delayedNotifications += 1
        trace.record(t, board: conn.board, .fault, "notification delayed to the next connection event")
        conn.peripheral[0].delayed = true
        return true
    }

    /// The hostile reorder fault (impossible on a BLE link, see `FaultPlan.reorderNotification`):
    /// the board's next notification slips behind the one after it, or into the next event when
    /// there is none. Each notification is held back at most once.
    private mutating func reorderNotificationIfFaulted(_ conn: inout Connection, eventStart start: VirtualInstant) {
        guard let first = conn.peripheral.first, first.handedAt < start, !first.delayed,
            case .notification = first.body, first.fragments.count == 1,
            rng.chance(faults.reorderNotification)
        else { return }
        stats.faults.reorderedNotifications += 1
        trace.record(t, board: conn.board, .fault, "notification reordered")
        var held = conn.peripheral.removeFirst()
        held.delayed = true
        if conn.peripheral.first.map({ $0.handedAt < start }) == true {
            conn.peripheral.insert(held, at: 1)
        } else {
            held.handedAt = start
            conn.peripheral.insert(held, at: 0)
        }
    }
}
