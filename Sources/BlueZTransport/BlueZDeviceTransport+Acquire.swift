import DBus
import Synchronization
import Transport

/// How the writes and notifications of a transport went: through the sockets of
/// `AcquireWrite`/`AcquireNotify`, or through `WriteValue` and `PropertiesChanged`.
public struct BlueZPathCounts: Sendable, Equatable {
    /// Write commands sent as datagrams on an acquired socket.
    public var socketWrites = 0
    /// Writes sent with `WriteValue`.
    public var valueWrites = 0
    /// Notifications received as datagrams on an acquired socket.
    public var socketNotifications = 0
    /// Sockets BlueZ handed out.
    public var acquiredWrite = 0
    public var acquiredNotify = 0
    /// Why BlueZ's sockets were not used, when they were not (one line per refusal or closure).
    public var fallbacks: [String] = []
    /// `PropertiesChanged(Value)` signals ignored because notifications of that characteristic
    /// came through a socket at the time.
    public var ignoredSignals = 0
}

/// The sockets BlueZ handed out on the current link, and what it refused.
struct AcquiredSockets: Sendable {
    struct WriteSocket: Sendable {
        let socket: PacketSocket
        /// The ATT MTU BlueZ returned: datagrams carry at most `mtu - 3` bytes.
        let mtu: Int
    }
    var write: [GATTCharacteristic: WriteSocket] = [:]
    var notify: [GATTCharacteristic: PacketSocket] = [:]
    var readers: [Task<Void, Never>] = []
    /// Characteristics not to ask for again on this link ("write …" / "notify …").
    var refused: Set<String> = []
    /// This BlueZ has no Acquire methods (before 5.46): never ask again.
    var unavailable = false
    var counts = BlueZPathCounts()

    /// Closes every socket (the link is gone, or the transport closes).
    mutating func dropAll() {
        for w in write.values { w.socket.close() }
        for n in notify.values { n.close() }
        for r in readers { r.cancel() }
        write = [:]
        notify = [:]
        readers = []
        refused = []
    }
}

/// `AcquireWrite` and `AcquireNotify` (BlueZ 5.46 and later): a `SOCK_SEQPACKET` socket per
/// characteristic, one ATT value per datagram, instead of one D-Bus round trip per write and
/// one signal per notification (B566 `src/gatt-client.c` `create_sock()`, `sock_read()`,
/// `notify_io_cb()`). `WriteValue` and `PropertiesChanged` remain the fallback: when BlueZ
/// refuses (no such method, not permitted, not supported), when a call fails, and when a socket
/// closes while the link stays up (for the rest of that link).
extension BlueZDeviceTransport {
    /// The socket for write commands to `c`, acquiring it on first use; nil to use `WriteValue`.
    func commandSocket(for c: GATTCharacteristic, size: Int, timeout: Duration, operation: String) async throws
        -> AcquiredSockets.WriteSocket?
    {
        guard settings.acquireSockets else { return nil }
        let key = "write \(c.characteristic)"
        let cached = sockets.withLock { s -> AcquiredSockets.WriteSocket?? in
            if s.unavailable || s.refused.contains(key) { return .some(nil) }
            return s.write[c].map { .some($0) }
        }
        if let cached { return cached.flatMap { size <= $0.mtu - 3 ? $0 : nil } }
        let table = try await currentGATT(operation: operation)
        if let flags = table.flags[c], !flags.contains("write-without-response") {
            refuse(key, "\(c.characteristic) has no write-without-response")
            return nil
        }
        let path = try await characteristicPath(c, operation: operation)
        let reply: [DBusValue]
        do {
            reply = try await guarded(operation) { [bus] in
                try await bus.rawCall(
                    path, BlueZNames.gattCharacteristic, "AcquireWrite", [.propertyMap([:])],
                    timeout: min(timeout, .seconds(10)))
            }
        } catch let error as DBusError {
            refuse(key, "AcquireWrite on \(c.characteristic): \(error)", unknownMethod: error.hasName(.unknownMethod))
            return nil
        }
        guard let fd = try? reply.argument(0).unixFD(), let mtu = try? reply.argument(1).uint16(), mtu >= 23,
            let socket = try? PacketSocket(fd)
        else {
            refuse(key, "AcquireWrite on \(c.characteristic) answered '\(reply.signature)' instead of (h fd, q mtu)")
            return nil
        }
        let held = AcquiredSockets.WriteSocket(socket: socket, mtu: Int(min(mtu, UInt16(BlueZLimits.usableMTU))))
        // BlueZ never writes to this socket: its end closing (EOF) is all there is to read.
        let datagrams = socket.datagrams()
        let watcher = Task { [weak self] in
            for await _ in datagrams {}
            self?.socketClosed(key, write: c, socket: socket)
        }
        sockets.withLock { s in
            s.write[c] = held
            s.readers.append(watcher)
            s.counts.acquiredWrite += 1
        }
        return size <= held.mtu - 3 ? held : nil
    }

    /// Sends `bytes` on the acquired socket of `c`; false when there is none (or it just
    /// closed), and the caller uses `WriteValue`.
    func sendThroughSocket(_ bytes: [UInt8], to c: GATTCharacteristic, timeout: Duration, operation: String)
        async throws -> Bool
    {
        guard let held = try await commandSocket(for: c, size: bytes.count, timeout: timeout, operation: operation)
        else { return false }
        do {
            try await held.socket.send(bytes, timeout: timeout)
            sockets.withLock { $0.counts.socketWrites += 1 }
            return true
        } catch {
            socketClosed("write \(c.characteristic)", write: c, socket: held.socket, why: "\(error)")
            return false
        }
    }

    /// Waits until bluetoothd has read every write command sent on the write sockets (and so
    /// handed them to its ATT queue, B566 `src/gatt-client.c` `sock_read()`), up to `timeout`.
    /// Before a `Disconnect`, and for a write that is waited for: a datagram bluetoothd has not
    /// read when the link goes is lost with the socket.
    func flushWriteSockets(timeout: Duration) async {
        let open = sockets.withLock { $0.write.values.map(\.socket) }
        for socket in open { _ = await socket.waitUntilRead(timeout: timeout) }
    }

    /// After `StartNotify` worked on this link, trades it for an `AcquireNotify` socket.
    ///
    /// Only then: BlueZ 5.66 never answers an `AcquireNotify` whose CCC write the board
    /// refuses, and keeps the characteristic locked (fixed in 5.84 by `476ae809a`); a
    /// `StartNotify` that worked shows the board takes the CCC write on this link.
    /// `AcquireNotify` is `InProgress` beside a `StartNotify` session, so this client's session
    /// is stopped first. Any failure goes back to `StartNotify`.
    func acquireNotifications(_ c: GATTCharacteristic, path: String, timeout: Duration) async throws {
        let key = "notify \(c.characteristic)"
        guard settings.acquireSockets,
            !(sockets.withLock { $0.unavailable || $0.refused.contains(key) || $0.notify[c] != nil })
        else { return }
        let table = try await currentGATT(operation: "enabling notifications of \(c.characteristic)")
        guard table.flags[c]?.contains("notify") ?? false else {
            refuse(key, "\(c.characteristic) has no notify flag")
            return
        }
        let operation = "acquiring the notification socket of \(c.characteristic)"
        let reply: [DBusValue]
        do {
            reply = try await guarded(operation) { [bus] in
                try await bus.rawCall(path, BlueZNames.gattCharacteristic, "StopNotify", timeout: timeout)
                return try await bus.rawCall(
                    path, BlueZNames.gattCharacteristic, "AcquireNotify", [.propertyMap([:])],
                    timeout: min(timeout, .seconds(10)))
            }
        } catch let error as DBusError {
            refuse(key, "AcquireNotify on \(c.characteristic): \(error)", unknownMethod: error.hasName(.unknownMethod))
            try await startNotify(c, timeout: timeout)
            return
        }
        guard let fd = try? reply.argument(0).unixFD(), let socket = try? PacketSocket(fd) else {
            refuse(key, "AcquireNotify on \(c.characteristic) answered '\(reply.signature)' instead of (h fd, q mtu)")
            try await startNotify(c, timeout: timeout)
            return
        }
        let datagrams = socket.datagrams()
        let reader = Task { [weak self] in
            for await bytes in datagrams {
                guard let self else { return }
                guard bytes.count <= BlueZLimits.maximumValueLength else {
                    // BlueZ writes one notification's value per datagram (B566
                    // `src/gatt-client.c` `notify_io_cb()`): more than an attribute holds is
                    // a value BlueZ never sends, as through PropertiesChanged.
                    let first = self.state.withLock { s -> String? in
                        s.droppedNotifications += 1
                        let before = s.violation
                        s.note(
                            "a notification that cannot come from a board (\(bytes.count) bytes, more than an attribute holds: 512)"
                        )
                        return before == nil ? s.violation : nil
                    }
                    if let first { self.sinks.violation(first) }
                    continue
                }
                self.state.withLock { $0.deliveredNotifications += 1 }
                self.sockets.withLock { $0.counts.socketNotifications += 1 }
                self.sinks.notify(c, bytes)
            }
            guard let self else { return }
            // Closed while the link stays up (StopNotify by another client, a BlueZ restart):
            // notifications come back as signals.
            if self.socketClosed(key, notify: c, socket: socket), self.state.withLock({ $0.linkUp }) {
                try? await self.startNotify(c, timeout: timeout)
            }
        }
        sockets.withLock { s in
            s.notify[c] = socket
            s.readers.append(reader)
            s.counts.acquiredNotify += 1
        }
    }

    /// `StartNotify`, with pairing when the board asks for it.
    func startNotify(_ c: GATTCharacteristic, timeout: Duration) async throws {
        do {
            try await gattCall("enabling notifications of \(c.characteristic)", c, "StartNotify", [], timeout: timeout)
        } catch TransportError.failed(_, let message) where message.contains("still in progress") {
            // A subscription of this client is already pending: it will be on shortly.
        }
    }

    /// True while notifications of `c` come through an acquired socket.
    func notifiesThroughSocket(_ c: GATTCharacteristic) -> Bool {
        sockets.withLock { $0.notify[c]?.isOpen ?? false }
    }

    private func refuse(_ key: String, _ why: String, unknownMethod: Bool = false) {
        sockets.withLock { s in
            s.refused.insert(key)
            if unknownMethod { s.unavailable = true }
            s.counts.fallbacks.append(why)
        }
    }

    /// Forgets a socket that closed (if it is still the one held); true when it was.
    @discardableResult
    private func socketClosed(
        _ key: String, write c: GATTCharacteristic? = nil, notify n: GATTCharacteristic? = nil,
        socket: PacketSocket, why: String = "closed"
    ) -> Bool {
        sockets.withLock { s in
            var held = false
            if let c, s.write[c]?.socket === socket {
                s.write[c] = nil
                held = true
            }
            if let n, s.notify[n] === socket {
                s.notify[n] = nil
                held = true
            }
            guard held else { return false }
            socket.close()
            s.refused.insert(key)
            s.counts.fallbacks.append("the \(key) socket \(why) with the link up")
            return true
        }
    }

    /// Closes the sockets of the link that ended.
    func dropSockets() {
        sockets.withLock { $0.dropAll() }
    }

    /// How the writes and notifications went so far.
    public var pathCounts: BlueZPathCounts { sockets.withLock { $0.counts } }
}
