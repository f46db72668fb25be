import DBus
import Transport

extension BlueZDeviceTransport {
    /// Calls a `GattCharacteristic1` method on the characteristic's current object path.
    ///
    /// The call fails at once with `TransportError.disconnected` when the link drops while it
    /// waits. `InProgress` (a request write or read already outstanding) is retried after 10 ms,
    /// as bleak does; an authentication error pairs the board and retries once.
    @discardableResult
    func gattCall(
        _ operation: String, _ characteristic: GATTCharacteristic, _ method: String, _ arguments: [DBusValue],
        timeout: Duration
    ) async throws -> [DBusValue] {
        var paired = false
        var busyRetries = 0
        while true {
            do {
                let path = try await characteristicPath(characteristic, operation: operation)
                return try await guarded(operation) { [bus] in
                    try await bus.rawCall(path, BlueZNames.gattCharacteristic, method, arguments, timeout: timeout)
                }
            } catch let error as DBusError {
                if error.hasName(.bluezInProgress), busyRetries < 50 {
                    busyRetries += 1
                    try await Task.sleep(for: .milliseconds(10))
                    continue
                }
                if BlueZError.needsPairing(error), settings.pairWhenRequired, !paired {
                    paired = true
                    do { try await pair() } catch let e as BlueZError { throw e.transportError }
                    continue
                }
                throw transportError(error, operation: operation)
            } catch let error as BlueZError {
                throw error.transportError
            }
        }
    }

    /// A D-Bus error of a GATT call as the flows see it: "not connected" after a link loss
    /// becomes that loss, with its reason.
    func transportError(_ error: DBusError, operation: String) -> TransportError {
        var mapped = BlueZError.from(error, operation: operation)
        if case .notConnected = mapped, let reason = state.withLock({ $0.linkUp ? nil : $0.pendingReason }) {
            mapped = .disconnected(operation: operation, reason: reason)
        }
        return mapped.transportError
    }

    /// The object path of a characteristic on the current connection.
    func characteristicPath(_ characteristic: GATTCharacteristic, operation: String) async throws -> String {
        guard state.withLock({ $0.linkUp }) else { throw TransportError.notConnected(operation: operation) }
        let table = try await currentGATT(operation: operation)
        guard table.services.contains(characteristic.service) else {
            throw TransportError.serviceNotFound(characteristic.service)
        }
        guard let path = table.characteristics[characteristic] else {
            throw TransportError.characteristicNotFound(characteristic)
        }
        return path
    }

    /// Runs `body`, failing with `.disconnected` as soon as the link drops.
    func guarded<T: Sendable>(_ operation: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let losses = sinks.disconnects()
        guard state.withLock({ $0.linkUp }) else { throw TransportError.notConnected(operation: operation) }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                for await reason in losses { throw TransportError.disconnected(operation: operation, reason: reason) }
                return nil
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw CancellationError()
        }
    }
}
