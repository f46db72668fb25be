import DBus
import Foundation
import Synchronization
import Transport

/// One board over BlueZ: the `BLETransport` that the flows run on.
///
/// It owns a private bus connection. The BlueZ signals are subscribed when it opens, so the
/// `PropertiesChanged` match for every characteristic is on the bus before any `StartNotify`,
/// and no early notification is lost. Each connect re-reads the GATT table, because a board
/// that reset into pairing mode or into a new image may come back with other objects.
public final class BlueZDeviceTransport: BLETransport, StackIntegrityReporting {
    /// Tuning for the quirks of BlueZ and of boards.
    public struct Settings: Sendable {
        /// Connect attempts for the errors BlueZ wants retried (InProgress, connection aborts).
        public var connectAttempts = 4
        /// Pause before the second attempt; doubled each time.
        public var connectRetryDelay: Duration = .milliseconds(500)
        /// How long BlueZ may take to resolve the GATT services after connecting.
        public var servicesResolvedTimeout: Duration = .seconds(20)
        /// How long to scan for the board when BlueZ has forgotten it (after a reset).
        public var rediscoverTimeout: Duration = .seconds(15)
        /// Pair (and trust) when the board asks for it. When false, such boards fail.
        public var pairWhenRequired = true
        /// Pair right after the first connect, before the board asks.
        public var pairAlways = false
        /// Write commands and take notifications through the sockets of `AcquireWrite` and
        /// `AcquireNotify` where BlueZ grants them (else `WriteValue` and `PropertiesChanged`).
        /// Default on; `BITFLASH_BLUEZ_ACQUIRE=0` in the environment turns it off (to compare the
        /// two paths, or where a BlueZ's sockets misbehave).
        public var acquireSockets = ProcessInfo.processInfo.environment["BITFLASH_BLUEZ_ACQUIRE"] != "0"
        /// After a board reset into its Nordic bootloader (or out of it): how long to try the
        /// address it is expected at before scanning for it at its other address (the next one).
        public var bootloaderAddressWindow: Duration = .seconds(5)
        public init() {}
    }

    public let bus: BlueZBus
    public let settings: Settings
    /// The board's address, `AA:BB:CC:DD:EE:FF` (its application's; see `currentAddress`).
    public let address: String
    public let adapterPath: String
    /// The name it advertised, when known.
    public let name: String?

    let state: Mutex<BlueZLinkState>
    let sinks = Sinks()
    let sockets = Mutex(AcquiredSockets())
    private let pump: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(bus: BlueZBus, device: BlueZDevice, settings: Settings) {
        self.bus = bus
        self.settings = settings
        self.address = device.address
        self.adapterPath = device.adapterPath
        self.name = device.name
        state = Mutex(BlueZLinkState(devicePath: device.path, device: device))
    }

    /// Opens a transport for `device` on its own bus connection, subscribed to BlueZ's signals.
    /// Nothing is connected yet: call `connect(timeout:)`.
    public static func open(device: BlueZDevice, settings: Settings = Settings(), bus address: DBusBusAddress = .system)
        async throws -> BlueZDeviceTransport
    {
        let bus = try await BlueZBus.open(bus: address)
        do {
            return try await open(device: device, settings: settings, on: bus)
        } catch {
            bus.close()
            throw error
        }
    }

    /// Opens a transport on an existing bus connection (which it then owns).
    public static func open(device: BlueZDevice, settings: Settings = Settings(), on bus: BlueZBus) async throws
        -> BlueZDeviceTransport
    {
        let transport = BlueZDeviceTransport(bus: bus, device: device, settings: settings)
        let events = try await bus.events()
        let task = Task { [weak transport] in
            for await event in events {
                guard let transport else { return }
                transport.handle(event)
            }
        }
        transport.pump.withLock { $0 = task }
        return transport
    }

    /// Stops listening and closes the bus connection (BlueZ then drops this client's
    /// notification sessions). The link itself is left as it is: call `disconnect()` first.
    public func close() {
        dropSockets()
        pump.withLock { $0?.cancel() }
        sinks.finishAll()
        bus.close()
    }

    deinit { close() }

    func handle(_ event: BlueZEvent) {
        let (effects, violation) = state.withLock { s -> ([BlueZLinkState.Effect], String?) in
            let before = s.violation
            let effects = s.apply(event)
            for case .linkLost(let reason) in effects {
                // Announced under the state lock, so a listener that subscribes while the link
                // goes down hears of the loss exactly once (`disconnects()`). BlueZ shuts the
                // acquired sockets down at a disconnect; a new link acquires anew.
                dropSockets()
                sinks.linkLost(reason)
            }
            return (effects, before == nil ? s.violation : nil)
        }
        if let violation { sinks.violation(violation) }
        for effect in effects {
            switch effect {
            case .linkLost:
                break
            case let .notification(c, bytes):
                // While notifications come through an AcquireNotify socket, BlueZ emits no
                // Value change for them: one that comes anyway is not a notification to this
                // client (another client's read, or a notification registration BlueZ 5.66
                // kept from an earlier client), and would arrive twice.
                if notifiesThroughSocket(c) {
                    sockets.withLock { $0.counts.ignoredSignals += 1 }
                } else {
                    sinks.notify(c, bytes)
                }
            }
        }
        sinks.tick()
    }

    /// The label used in messages: name (cut to 48 characters) and address.
    var label: String { name.map { "\($0.count > 48 ? $0.prefix(47) + "…" : $0) (\(address))" } ?? address }

    // MARK: BLETransport

    public func connect(timeout: Duration) async throws -> ConnectionInfo {
        do { return try await establish(timeout: timeout) } catch { throw error.transportError }
    }

    public func disconnect() async {
        let (path, up) = state.withLock { s -> (String, Bool) in
            s.closingLocally = true
            return (s.devicePath, s.linkUp)
        }
        if up { await flushWriteSockets(timeout: .seconds(2)) }
        _ = try? await bus.rawCall(path, BlueZNames.device, "Disconnect", timeout: .seconds(10))
        if up { try? await waitUntil(timeout: .seconds(5), operation: "disconnect") { !$0.linkUp } }
        // A link BlueZ did not report closed in time is given up all the same, and said so:
        // a flow that asked for the disconnect waits for the loss.
        state.withLock { s in
            if let reason = s.forceDown() {
                dropSockets()
                sinks.linkLost(reason)
            }
            s.closingLocally = false
        }
        sinks.tick()
    }

    public func characteristics(of service: BLEUUID, timeout: Duration) async throws -> [BLEUUID] {
        do {
            let table = try await currentGATT(operation: "listing characteristics")
            guard table.services.contains(service) else { throw TransportError.serviceNotFound(service) }
            return table.characteristics.keys.filter { $0.service == service }.map(\.characteristic).sorted()
        } catch let error as BlueZError { throw error.transportError }
    }

    public func write(_ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind, timeout: Duration)
        async throws
    {
        let operation = "write to \(characteristic.characteristic)"
        guard bytes.count <= BlueZLimits.maximumValueLength else {
            throw TransportError.failed(
                operation: operation, message: "\(bytes.count) bytes is more than an attribute holds (512)")
        }
        if kind == .command,
            try await sendThroughSocket(bytes, to: characteristic, timeout: timeout, operation: operation)
        {
            // Waited for, as `WriteValue`'s reply is: until bluetoothd has taken it from the socket.
            await flushWriteSockets(timeout: timeout)
            return
        }
        // A D-Bus call can overtake datagrams bluetoothd has not read yet: the commands sent
        // before this write must reach its ATT queue first (where commands leave before
        // requests, B566 `src/shared/att.c` `pick_next_send_op()`).
        await flushWriteSockets(timeout: timeout)
        sockets.withLock { $0.counts.valueWrites += 1 }
        try await gattCall(
            operation, characteristic, "WriteValue",
            [.bytes(bytes), .propertyMap(["type": .string(kind.rawValue)])], timeout: timeout)
    }

    /// A write command that does not wait: a datagram on the acquired socket, else a
    /// `WriteValue` whose reply is collected in the background (libdbus sends the calls in
    /// order, and bluetoothd queues commands in order, B566 `src/shared/att.c` `bt_att_send()`).
    public func enqueueCommand(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, timeout: Duration,
        failed: @escaping @Sendable (TransportError) -> Void
    ) async throws {
        let operation = "write to \(characteristic.characteristic)"
        guard bytes.count <= BlueZLimits.maximumValueLength else {
            throw TransportError.failed(
                operation: operation, message: "\(bytes.count) bytes is more than an attribute holds (512)")
        }
        if try await sendThroughSocket(bytes, to: characteristic, timeout: timeout, operation: operation) { return }
        let path = try await characteristicPath(characteristic, operation: operation)
        await flushWriteSockets(timeout: timeout)
        let reply: DBusPendingReply
        do {
            reply = try bus.connection.send(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic,
                method: "WriteValue",
                arguments: [.bytes(bytes), .propertyMap(["type": .string(WriteKind.command.rawValue)])],
                timeout: timeout)
        } catch let error as DBusError {
            throw transportError(error, operation: operation)
        }
        sockets.withLock { $0.counts.valueWrites += 1 }
        Task { [weak self] in
            do {
                _ = try await reply.reply()
            } catch let error as DBusError {
                failed(
                    self?.transportError(error, operation: operation)
                        ?? BlueZError.from(error, operation: operation).transportError)
            } catch {}
        }
    }

    public func read(_ characteristic: GATTCharacteristic, timeout: Duration) async throws -> [UInt8] {
        let operation = "read of \(characteristic.characteristic)"
        await flushWriteSockets(timeout: timeout)
        let reply = try await gattCall(operation, characteristic, "ReadValue", [.propertyMap([:])], timeout: timeout)
        guard let value = try? reply.argument(0).bytes() else {
            throw TransportError.failed(
                operation: operation, message: "BlueZ sent '\(reply.signature)' instead of the bytes 'ay'")
        }
        guard value.count <= BlueZLimits.maximumValueLength else {
            throw TransportError.failed(
                operation: operation, message: "BlueZ sent \(value.count) bytes, more than an attribute holds (512)")
        }
        return value
    }

    public func notifications(of characteristic: GATTCharacteristic) -> AsyncStream<[UInt8]> {
        sinks.notifications(of: characteristic)
    }

    /// `StartNotify` (pairing when the board asks), then, where BlueZ grants it, the socket of
    /// `AcquireNotify` instead (`acquireNotifications`).
    public func enableNotifications(_ characteristic: GATTCharacteristic, timeout: Duration) async throws {
        if notifiesThroughSocket(characteristic) { return }
        try await bondBeforeBondedEntry(characteristic)
        try await startNotify(characteristic, timeout: timeout)
        guard settings.acquireSockets else { return }
        let path = try await characteristicPath(
            characteristic, operation: "enabling notifications of \(characteristic.characteristic)")
        try await acquireNotifications(characteristic, path: path, timeout: timeout)
    }

    /// One element per link loss. A stream taken while the last link is down (it dropped
    /// between two flows, as a board that resets after pairing drops it) starts with that
    /// loss, so a flow that starts on it reconnects instead of waiting on a dead link.
    public func disconnects() -> AsyncStream<DisconnectReason> {
        state.withLock { s in sinks.disconnects(startingWith: s.linkUp ? nil : s.lastLoss) }
    }

    public var mtu: Int { get async { state.withLock { $0.mtu } } }

    /// Notification values dropped as impossible (wrong type or longer than 512 bytes).
    public var droppedNotifications: Int { state.withLock { $0.droppedNotifications } }

    /// The first value BlueZ passed on for this board that BlueZ never sends.
    public var stackViolation: String? { state.withLock { $0.violation } }

    public func stackViolations() -> AsyncStream<String> {
        let stream = sinks.violations()
        // Already set: said at once (the stream buffers it for the reader).
        if let violation = stackViolation { sinks.violation(violation) }
        return stream
    }

    /// Advice for a flow that failed on this board, from what the transport saw: notifications
    /// BlueZ passed on that cannot be real, or none at all from a bonded board (a stale bond).
    public var failureHint: String? {
        let (dropped, delivered, paired, violation) = state.withLock {
            ($0.droppedNotifications, $0.deliveredNotifications, $0.device?.paired ?? false, $0.violation)
        }
        // A run that ended with the violation says so already.
        if violation != nil { return nil }
        if dropped > 0 {
            return "BlueZ passed on \(dropped) notification\(dropped == 1 ? "" : "s") that cannot come from a board "
                + "(wrong type or over 512 bytes); check the BlueZ version and other Bluetooth software on this computer"
        }
        if delivered == 0, paired {
            return "no notification arrived from this bonded board: the board forgot this computer "
                + "(it was reflashed or reset to pairing mode): run `bitflash forget \(address)` "
                + "and put the board in pairing mode (hold A+B, press reset)"
        }
        return nil
    }
}
