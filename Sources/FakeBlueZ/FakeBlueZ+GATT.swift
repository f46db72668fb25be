import DBus
import NordicDFUFrames
import SimulatedBoard
import Transport

/// GattCharacteristic1 and GattDescriptor1: reads, writes to the simulated board,
/// notification sessions, and the board's answers as `PropertiesChanged(Value)`.
extension FakeBlueZ {
    /// The largest attribute value (ATT).
    static let maxAttributeValue = 512

    /// Options of `ReadValue`/`WriteValue`, checked as `parse_options` in `src/gatt-client.c` does.
    struct GATTOptions {
        var offset: UInt16 = 0
        var type: String?

        init(_ value: DBusValue) throws {
            guard let entries = try? value.properties() else { throw BlueZ.invalidArguments }
            for (key, value) in entries {
                switch key.lowercased() {
                case "offset":
                    guard case .uint16(let n) = value else { throw BlueZ.invalidArguments }
                    offset = n
                case "type":
                    guard case .string(let t) = value, ["command", "request", "reliable"].contains(t) else {
                        throw BlueZ.invalidArguments
                    }
                    type = t
                default: break
                }
            }
        }
    }

    func characteristicCall(_ i: Int, path: String, _ call: DBusMethodCall) throws -> [DBusValue] {
        guard call.interface == nil || call.interface == BlueZ.gattCharacteristic else {
            throw DBusError(name: DBusErrorName.unknownMethod.rawValue, message: "Unknown method \(call.member)")
        }
        switch call.member {
        case "ReadValue":
            try call.expectSignature("a{sv}")
            let options = try GATTOptions(call.arguments[0])
            return [.bytes(try locked { s in try readValue(i, path: path, offset: options.offset, &s) })]
        case "WriteValue":
            try call.expectSignature("aya{sv}")
            let bytes = try call.arguments[0].bytes()
            let options = try GATTOptions(call.arguments[1])
            try locked { s in try writeValue(i, path: path, bytes, options, &s) }
        case "StartNotify":
            try call.expectSignature("")
            try locked { s in try startNotify(i, path: path, sender: call.sender, &s) }
        case "StopNotify":
            try call.expectSignature("")
            try locked { s in
                if s.devices[i].notifySockets[path] != nil {
                    releaseNotify(i, path: path, &s)
                    return
                }
                guard s.devices[i].notifySessions[path]?.contains(call.sender) == true else {
                    throw BlueZ.error("Failed", "No notify session started")
                }
                stopNotifySession(i, path: path, sender: call.sender, &s)
            }
        case "AcquireWrite":
            return try acquireWrite(i, path: path, call)
        case "AcquireNotify":
            return try acquireNotify(i, path: path, call)
        default:
            throw DBusError(
                name: DBusErrorName.unknownMethod.rawValue,
                message: "Unknown method \(call.member) on \(BlueZ.gattCharacteristic)")
        }
        return []
    }

    /// The connected characteristic at `path`, or BlueZ's "Not connected".
    private func connected(_ i: Int, _ path: String, _ s: FakeState) throws -> FakeGATTTable.Characteristic {
        guard s.devices[i].connected, let c = s.devices[i].gatt?.characteristic(at: path) else {
            throw BlueZ.gattNotConnected
        }
        return c
    }

    /// What the board's security does to an acknowledged operation (read, write request, CCCD write).
    func checkSecurity(_ i: Int, _ s: FakeState) throws {
        if s.devices[i].staleBond { throw BlueZ.authenticationFailed }
        if s.needsBond(i), !s.devices[i].paired { throw BlueZ.notPaired }
    }

    private func readValue(_ i: Int, path: String, offset: UInt16, _ s: inout FakeState) throws -> [UInt8] {
        let c = try connected(i, path, s)
        try checkSecurity(i, s)
        guard c.flags.contains("read") else { throw BlueZ.error("NotPermitted", "Read not permitted") }
        let value = s.devices[i].values[path] ?? []
        guard Int(offset) <= value.count else { throw BlueZ.error("InvalidArguments", "Invalid offset") }
        notifyValue(i, path: path, value, &s)
        return Array(value[Int(offset)...])
    }

    private func writeValue(_ i: Int, path: String, _ bytes: [UInt8], _ options: GATTOptions, _ s: inout FakeState)
        throws
    {
        let c = try connected(i, path, s)
        let d = s.devices[i]
        guard d.writeSockets[path] == nil else { throw BlueZ.error("NotPermitted", "Write acquired") }
        let type = options.type ?? (c.flags.contains("write") ? "request" : "command")
        let kind: WriteKind
        switch type {
        case "command":
            guard c.flags.contains("write-without-response") else { throw BlueZ.notSupported }
            guard options.offset == 0 else { throw BlueZ.invalidArguments }
            guard bytes.count <= Int(d.mtu) - 3 else { throw BlueZ.error("Failed", "Failed to initiate write") }
            kind = .command
        case "request":
            guard c.flags.contains("write") else { throw BlueZ.notSupported }
            guard bytes.count <= Self.maxAttributeValue else { throw BlueZ.error("InvalidArguments", "Invalid Length") }
            kind = .request
        default:
            throw BlueZ.notSupported
        }
        // The board's stack drops a write command it may not accept; it refuses a request.
        if kind == .request { try checkSecurity(i, s) }
        deliverWrite(i, c, bytes, kind: kind, &s)
    }

    /// A write that reached the board (through `WriteValue` or an acquired socket).
    func deliverWrite(
        _ i: Int, _ c: FakeGATTTable.Characteristic, _ bytes: [UInt8], kind: WriteKind, _ s: inout FakeState
    ) {
        let d = s.devices[i]
        guard !d.staleBond, !(s.needsBond(i) && !d.paired), let characteristic = c.characteristic else {
            note("[\(d.name)] write of \(bytes.count) bytes dropped by the board's security")
            return
        }
        let bonded = d.paired && !d.staleBond
        if characteristic == NordicGATT.buttonlessBonded, bonded {
            // The bonded buttonless entry hands this bond to the bootloader (ble_dfu_bonded.c `enter_bootloader`).
            s.devices[i].handedOverBond = true
        }
        let step = s.devices[s.boardIndex(i)].host.write(bytes, to: characteristic, kind: kind, bonded: bonded)
        s.devices[i].writesDelivered += 1
        apply(step, device: i, &s)
        if let left = s.devices[i].writesUntilDisconnect, s.devices[i].connected {
            if left <= 1 {
                s.devices[i].writesUntilDisconnect = nil
                note("[\(d.name)] link lost after \(s.devices[i].writesDelivered) writes (scenario)")
                dropLink(i, &s)
            } else {
                s.devices[i].writesUntilDisconnect = left - 1
            }
        }
    }

    private func startNotify(_ i: Int, path: String, sender: String, _ s: inout FakeState) throws {
        // On a cached table StartNotify succeeds while disconnected; BlueZ enables it at the next connection.
        guard let c = s.devices[i].gatt?.characteristic(at: path) else { throw BlueZ.gattNotConnected }
        guard s.devices[i].notifySockets[path] == nil else { throw BlueZ.error("NotPermitted", "Notify acquired") }
        guard c.canNotify else { throw BlueZ.notSupported }
        if s.needsBond(i), !s.devices[i].paired { throw BlueZ.notPaired }
        var sessions = s.devices[i].notifySessions[path] ?? []
        guard sessions.insert(sender).inserted else { return }
        s.devices[i].notifySessions[path] = sessions
        // On a bonded link the CCCD write is stored for the bond: a peer-data update.
        if s.devices[i].paired, s.devices[i].connected { securityEvent(i, newPairing: false, &s) }
        if sessions.count == 1 { setCharacteristic(i, path: path, ["Notifying": .bool(true)], s) }
    }

    func stopNotifySession(_ i: Int, path: String, sender: String, _ s: inout FakeState) {
        s.devices[i].notifySessions[path]?.remove(sender)
        if s.devices[i].notifySessions[path]?.isEmpty == true {
            s.devices[i].notifySessions[path] = nil
            setCharacteristic(i, path: path, ["Notifying": .bool(false)], s)
        }
    }

    func setCharacteristic(_ i: Int, path: String, _ changes: [String: DBusValue], _ s: FakeState) {
        let changes = s.devices[i].hostile(at: path).properties(BlueZ.gattCharacteristic, changes)
        guard !changes.isEmpty else { return }
        emit("characteristic properties") {
            try server.setProperties(path: path, interface: BlueZ.gattCharacteristic, changes)
        }
    }

    /// A new value of a characteristic, as BlueZ signals it (also after a read).
    private func notifyValue(_ i: Int, path: String, _ bytes: [UInt8], _ s: inout FakeState) {
        s.devices[i].values[path] = bytes
        let (changes, invalidated) = s.devices[i].hostile(at: path).notification(
            bytes, index: s.devices[i].notificationsSent)
        s.devices[i].notificationsSent += 1
        emit("notification") {
            try server.setProperties(path: path, interface: BlueZ.gattCharacteristic, changes, invalidated: invalidated)
        }
    }

    /// Sends the oldest waiting notification, if its link is still up and subscribed, or
    /// carries out the reset that waited for the notifications before it.
    func deliverNotification(_ i: Int, _ s: inout FakeState) {
        guard !s.devices[i].outbox.isEmpty else { return }
        switch s.devices[i].outbox.removeFirst() {
        case let .notification(epoch, characteristic, bytes):
            let d = s.devices[i]
            guard d.connected, epoch == d.linkEpoch, !d.staleBond, let c = d.gatt?.characteristic(for: characteristic)
            else { return }
            if notifyThroughSocket(i, path: c.path, bytes, &s) { return }
            guard d.notifySessions[c.path]?.isEmpty == false else { return }
            s.devices[i].signalNotifications += 1
            notifyValue(i, path: c.path, bytes, &s)
        case .reset(let down):
            reset(i, down: down, &s)
        }
    }

    /// Carries out what the board asked for: notifications to subscribed clients, later work,
    /// a reset (the link drops; the board boots after its reset time).
    func apply(_ step: GATTBoardHost.Step, device i: Int, _ s: inout FakeState) {
        let name = s.devices[i].name
        for line in step.notes { note("[\(name)] \(line)") }
        // A notification goes on air at a later connection event, never in the one that carried
        // the write it answers: each is delivered one notification latency later, in order.
        for n in step.notifications {
            s.devices[i].outbox.append(.notification(epoch: s.devices[i].linkEpoch, n.characteristic, n.bytes))
            schedule(.deliver(device: i), after: Self.notificationLatency, minimumReal: Self.notificationLatency, &s)
        }
        let now = s.devices[s.boardIndex(i)].host.now
        for work in step.work {
            // At time scale 0 the board's own timers (the bootloaders' 120 s inactivity reset)
            // would fire before any client could act: they do not run.
            if options.timeScale == 0, work.delay >= Self.longestInstantWork { continue }
            schedule(.work(device: i, work, due: now + work.delay), after: work.delay, &s)
        }
        if let down = step.downFor {
            if s.devices[i].outbox.isEmpty {
                reset(i, down: down, &s)
            } else {
                // The board answers (an SMP reset response) before it goes down.
                s.devices[i].outbox.append(.reset(down: down))
                schedule(
                    .deliver(device: i), after: Self.notificationLatency, minimumReal: Self.notificationLatency, &s)
            }
        }
    }

    private func reset(_ i: Int, down: Duration, _ s: inout FakeState) {
        note("[\(s.devices[i].name)] resets: link lost, back in \(down) (modelled)")
        dropLink(i, &s)
        schedule(.boot(device: i), after: down, &s)
    }

    func descriptorCall(_ i: Int, path characteristicPath: String, _ call: DBusMethodCall) throws -> [DBusValue] {
        switch call.member {
        case "ReadValue":
            try call.expectSignature("a{sv}")
            return try locked { s in
                _ = try connected(i, characteristicPath, s)
                let on = s.devices[i].notifySessions[characteristicPath]?.isEmpty == false
                return [.bytes([on ? 1 : 0, 0])]
            }
        case "WriteValue":
            try call.expectSignature("aya{sv}")
            throw BlueZ.error("NotPermitted", "Write not permitted")
        default:
            throw DBusError(
                name: DBusErrorName.unknownMethod.rawValue,
                message: "Unknown method \(call.member) on \(BlueZ.gattDescriptor)")
        }
    }
}
