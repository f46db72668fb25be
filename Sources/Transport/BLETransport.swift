/// One BLE connection to one board, as every backend offers it.
///
/// Every operation takes a timeout measured on the transport's injected clock,
/// throws a `TransportError` that names the operation, and honours task
/// cancellation. Notifications come through one stream per characteristic:
/// subscribe first, then enable, so that no early notification is lost.
public protocol BLETransport: AnyObject, Sendable {
    /// Connects (or reconnects) to the board and resolves its services.
    func connect(timeout: Duration) async throws -> ConnectionInfo
    /// Connects to `target`: the same device, or the board's bootloader or application after
    /// it reset into the other (which may advertise at another address).
    func connect(to target: ConnectTarget, timeout: Duration) async throws -> ConnectionInfo
    /// Closes the link; returns once it is closed.
    func disconnect() async
    /// The characteristics of a service, by UUID.
    func characteristics(of service: BLEUUID, timeout: Duration) async throws -> [BLEUUID]
    func write(_ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind, timeout: Duration) async throws
    /// Hands a write command (write without response) to the link and returns without waiting
    /// for the stack to accept it; commands sent this way leave in the order they were sent.
    /// A refusal that comes later is passed to `failed`. A backend that cannot do better
    /// waits as `write(_:to:kind:timeout:)` does (the default).
    func enqueueCommand(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, timeout: Duration,
        failed: @escaping @Sendable (TransportError) -> Void) async throws
    func read(_ characteristic: GATTCharacteristic, timeout: Duration) async throws -> [UInt8]
    /// The notifications of a characteristic. Call before `enableNotifications`.
    func notifications(of characteristic: GATTCharacteristic) -> AsyncStream<[UInt8]>
    func enableNotifications(_ characteristic: GATTCharacteristic, timeout: Duration) async throws
    /// One element per link loss, with its reason. A stream taken after the last link was
    /// lost (and before a new one is up) starts with that loss: a flow that starts then must
    /// learn that its link is gone, not wait on it.
    func disconnects() -> AsyncStream<DisconnectReason>
    /// The negotiated ATT MTU of the current connection.
    var mtu: Int { get async }
}

extension BLETransport {
    public func enqueueCommand(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, timeout: Duration,
        failed: @escaping @Sendable (TransportError) -> Void
    ) async throws {
        try await write(bytes, to: characteristic, kind: .command, timeout: timeout)
    }

    /// A transport whose board keeps one address in every mode connects to it whatever the target.
    public func connect(to target: ConnectTarget, timeout: Duration) async throws -> ConnectionInfo {
        try await connect(timeout: timeout)
    }
}
