import DBus
import Transport

/// `AcquireWrite` and `AcquireNotify`, as BlueZ 5.66 answers them (B566 `src/gatt-client.c`
/// `characteristic_acquire_write()`, `characteristic_acquire_notify()`, `create_sock()`,
/// `sock_read()`, `notify_io_cb()`, `btd_gatt_client_disconnected()`):
/// - the reply is `(h fd, q mtu)`: one end of a `SOCK_SEQPACKET` socket pair and the ATT MTU;
/// - every datagram the client writes is one Write Command (one longer than MTU - 3 is
///   dropped without a word, as `sock_read()` ignores the failed encode);
/// - every notification is one datagram; `Value` and `PropertiesChanged` are left alone, and
///   a notification that finds the socket full is lost;
/// - `Failed "Not connected"` without a link, `NotPermitted "Write acquired"`/`"Notify acquired"`
///   while held (also for `WriteValue` and `StartNotify`), `InProgress` for `AcquireNotify`
///   while a `StartNotify` session exists, `NotSupported` without the flag (indicate-only
///   characteristics too, before 5.80);
/// - `StopNotify` closes an acquired notify socket; closing its end releases a socket; the
///   link dropping shuts both down (the client reads EOF).
/// `AcquireNotify` answers a refused CCC write with its ATT error, as BlueZ 5.84 does; 5.66
/// never answers then (fixed by `476ae809a`), which the client avoids by acquiring only after
/// `StartNotify` worked on the same link.
/// The scenario can refuse both methods (`refusesAcquire`: as a BlueZ without them, which
/// answers `UnknownMethod`) or close the sockets after some writes (`acquiredSocketsCloseAfter`).
extension FakeBlueZ {
    /// A socket handed out, and the link it belongs to.
    struct AcquiredSocket: Sendable {
        let socket: PacketSocket
        let epoch: Int
    }

    func acquireWrite(_ i: Int, path: String, _ call: DBusMethodCall) throws -> [DBusValue] {
        try call.expectSignature("a{sv}")
        return try locked { s in
            let c = try acquirable(i, path, s)
            guard s.devices[i].writeSockets[path] == nil else { throw BlueZ.error("NotPermitted", "Write acquired") }
            guard c.flags.contains("write-without-response") else { throw BlueZ.notSupported }
            let (mine, theirs) = try socketPair()
            let epoch = s.devices[i].linkEpoch
            s.devices[i].writeSockets[path] = AcquiredSocket(socket: mine, epoch: epoch)
            s.devices[i].acquiredWrites += 1
            let datagrams = mine.datagrams()
            Task { [weak self] in
                for await bytes in datagrams {
                    guard let self else { return }
                    try? self.locked { s in self.socketWrite(i, path: path, epoch: epoch, bytes, &s) }
                }
                try? self?.locked { s in self?.releaseWrite(i, path: path, socket: mine, &s) }
            }
            setCharacteristic(i, path: path, ["WriteAcquired": .bool(true)], s)
            note("[\(s.devices[i].name)] AcquireWrite on \(c.uuid): socket handed out (MTU \(s.devices[i].mtu))")
            return [.unixFD(theirs), .uint16(s.devices[i].mtu)]
        }
    }

    func acquireNotify(_ i: Int, path: String, _ call: DBusMethodCall) throws -> [DBusValue] {
        try call.expectSignature("a{sv}")
        return try locked { s in
            let c = try acquirable(i, path, s)
            guard s.devices[i].notifySockets[path] == nil else { throw BlueZ.error("NotPermitted", "Notify acquired") }
            guard s.devices[i].notifySessions[path]?.isEmpty ?? true else { throw BlueZ.inProgress }
            guard c.flags.contains("notify") else { throw BlueZ.notSupported }
            // The CCC write the board must accept (an ATT request, so its security applies).
            try checkSecurity(i, s)
            let (mine, theirs) = try socketPair()
            s.devices[i].notifySockets[path] = AcquiredSocket(socket: mine, epoch: s.devices[i].linkEpoch)
            s.devices[i].acquiredNotifies += 1
            if s.devices[i].paired { securityEvent(i, newPairing: false, &s) }
            // The client closing its end is a release: watch for the EOF.
            let datagrams = mine.datagrams()
            Task { [weak self] in
                for await _ in datagrams {}
                try? self?.locked { s in self?.releaseNotify(i, path: path, socket: mine, &s) }
            }
            setCharacteristic(i, path: path, ["NotifyAcquired": .bool(true)], s)
            note("[\(s.devices[i].name)] AcquireNotify on \(c.uuid): socket handed out")
            return [.unixFD(theirs), .uint16(s.devices[i].mtu)]
        }
    }

    /// The checks both methods share: a BlueZ that has them, a link, the characteristic.
    private func acquirable(_ i: Int, _ path: String, _ s: FakeState) throws -> FakeGATTTable.Characteristic {
        if s.devices[i].behaviour.refusesAcquire {
            throw DBusError(name: DBusErrorName.unknownMethod.rawValue, message: "Method not known to this BlueZ")
        }
        guard s.devices[i].connected, let c = s.devices[i].gatt?.characteristic(at: path) else {
            throw BlueZ.gattNotConnected
        }
        return c
    }

    private func socketPair() throws -> (PacketSocket, DBusFileDescriptor) {
        do { return try PacketSocket.pair() } catch {
            throw BlueZ.error("Failed", "Failed to create sockets: \(error)")
        }
    }

    /// One datagram from an acquired write socket: a Write Command to the board.
    private func socketWrite(_ i: Int, path: String, epoch: Int, _ bytes: [UInt8], _ s: inout FakeState) {
        guard s.devices[i].connected, s.devices[i].linkEpoch == epoch,
            let c = s.devices[i].gatt?.characteristic(at: path)
        else { return }
        guard bytes.count <= Int(s.devices[i].mtu) - 3 else {
            note("[\(s.devices[i].name)] a \(bytes.count)-byte datagram does not fit the MTU: dropped")
            return
        }
        s.devices[i].socketWrites += 1
        deliverWrite(i, c, bytes, kind: .command, &s)
        if let limit = s.devices[i].behaviour.acquiredSocketsCloseAfter, s.devices[i].socketWrites >= limit,
            !s.devices[i].socketsClosedByScenario
        {
            s.devices[i].socketsClosedByScenario = true
            note("[\(s.devices[i].name)] acquired sockets closed after \(limit) writes (scenario)")
            closeAcquiredSockets(i, &s)
        }
    }

    /// Sends a notification through an acquired socket; false when none is held for `path`.
    func notifyThroughSocket(_ i: Int, path: String, _ bytes: [UInt8], _ s: inout FakeState) -> Bool {
        guard let held = s.devices[i].notifySockets[path] else { return false }
        let index = s.devices[i].notificationsSent
        s.devices[i].notificationsSent += 1
        s.devices[i].socketNotifications += 1
        guard let sent = s.devices[i].hostile(at: path).datagram(bytes, index: index) else { return true }
        do {
            try held.socket.trySend(sent)
        } catch {
            note("[\(s.devices[i].name)] notification lost: the acquired socket \(error)")
        }
        return true
    }

    private func releaseWrite(_ i: Int, path: String, socket: PacketSocket, _ s: inout FakeState) {
        guard let held = s.devices[i].writeSockets[path], held.socket === socket else { return }
        socket.close()
        s.devices[i].writeSockets[path] = nil
        if s.devices[i].gatt?.characteristic(at: path) != nil {
            setCharacteristic(i, path: path, ["WriteAcquired": .bool(false)], s)
        }
    }

    func releaseNotify(_ i: Int, path: String, socket: PacketSocket? = nil, _ s: inout FakeState) {
        guard let held = s.devices[i].notifySockets[path], socket.map({ held.socket === $0 }) ?? true else { return }
        held.socket.close()
        s.devices[i].notifySockets[path] = nil
        if s.devices[i].gatt?.characteristic(at: path) != nil {
            setCharacteristic(i, path: path, ["NotifyAcquired": .bool(false)], s)
        }
    }

    /// Shuts every acquired socket of the device down (the link dropped, or the scenario says so).
    func closeAcquiredSockets(_ i: Int, _ s: inout FakeState) {
        for (path, held) in s.devices[i].writeSockets { releaseWrite(i, path: path, socket: held.socket, &s) }
        for path in Array(s.devices[i].notifySockets.keys) { releaseNotify(i, path: path, &s) }
    }
}
