import DBus
import Transport
import PartialFlashingFrames
import SMP

extension BlueZDeviceTransport {
    /// `connect(timeout:)` with the richer `BlueZError` (the CLI maps its cases to exit codes).
    ///
    /// Finds the board again if BlueZ forgot it, connects with the retries BlueZ needs (all
    /// within `timeout`), waits for the services, pairs when the board asks for a bond, and
    /// reads the GATT table afresh.
    public func establish(timeout: Duration) async throws(BlueZError) -> ConnectionInfo {
        do {
            dropSockets()
            try await ensureDeviceKnown()
            let path = state.withLock { $0.devicePath }
            let already = state.withLock { ($0.device?.connected ?? false) && ($0.device?.servicesResolved ?? false) }
            if !already { try await connectWithRetries(path: path, timeout: timeout) }
            state.withLock {
                $0.device?.connected = true
                $0.closingLocally = false
                $0.pendingReason = nil
                $0.gattDirty = true
            }
            try await waitForServices(path: path)
            // Only now is there a link for the flows: a drop before this is a failed connect.
            state.withLock { $0.linkEstablished() }
            if settings.pairAlways, !(state.withLock { $0.device?.paired ?? false }) { try await pair() }
            let table = try await currentGATT(operation: "reading the services of \(label)")
            try await pairIfAsked(table, timeout: timeout)
            // Two BlueZ hosts exchange an ATT MTU of 517, but a write carries at most one
            // attribute value (512 bytes): the flows size their writes as MTU - 3, so give them
            // the MTU a write can use.
            let mtu = min(table.mtu ?? BlueZLimits.defaultMTU, BlueZLimits.usableMTU)
            state.withLock { $0.mtu = mtu }
            // The name BlueZ has now: a board in its bootloader advertises "DfuTarg".
            return ConnectionInfo(services: table.services, mtu: mtu, name: state.withLock { $0.device?.name } ?? name)
        } catch {
            // A connect that failed after BlueZ sent what it never sends failed because of it,
            // not because of the radio.
            if let violation = stackViolation {
                throw BlueZError.unexpectedReply(operation: "connecting to \(label)", detail: violation)
            }
            if let error = error as? BlueZError { throw error }
            throw BlueZError.failed(operation: "connecting to \(label)", message: "\(error)")
        }
    }

    /// After a reset BlueZ may have dropped the device object: scan until the board is back.
    func ensureDeviceKnown() async throws {
        let tree = try await bus.objects()
        let path = state.withLock { $0.devicePath }
        if let d = tree.devices.first(where: { $0.path == path }) {
            state.withLock { $0.device = d }
            return
        }
        let scanner = BlueZScanner(bus: bus, adapter: adapterPath)
        let found = try await scanner.find(DeviceQuery(currentAddress), timeout: settings.rediscoverTimeout)
        state.withLock {
            $0.devicePath = found.path
            $0.device = found
        }
    }

    /// Calls `Connect` until it succeeds, a failure is not one to retry, the attempts are used
    /// up, or `timeout` (for all attempts together) has passed.
    func connectWithRetries(path: String, timeout: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var delay = settings.connectRetryDelay
        var attempt = 0
        while true {
            attempt += 1
            do {
                let left = clock.now.duration(to: deadline)
                guard left > .zero else {
                    throw BlueZError.timeout(operation: "connecting to \(label)", after: timeout)
                }
                try await bus.rawCall(path, BlueZNames.device, "Connect", timeout: left)
                return
            } catch let error as DBusError {
                if error.name == "org.bluez.Error.AlreadyConnected" { return }
                if case .timeout = error {
                    // BlueZ keeps trying; Disconnect cancels its pending connect.
                    _ = try? await bus.rawCall(path, BlueZNames.device, "Disconnect", timeout: .seconds(5))
                    throw BlueZError.connectFailed(
                        device: label, message: "the board did not answer within \(timeout.seconds.formatted1)s")
                }
                let timeLeft = clock.now.advanced(by: delay) < deadline
                guard BlueZError.isRetryableConnect(error), attempt < settings.connectAttempts, timeLeft else {
                    if case .remote(_, let message) = error, error.name?.hasPrefix(BlueZNames.errorPrefix) == true,
                        !["org.bluez.Error.NotReady"].contains(error.name ?? "")
                    {
                        throw BlueZError.connectFailed(
                            device: label, message: message.isEmpty ? (error.name ?? "") : message)
                    }
                    throw BlueZError.from(error, operation: "connecting to \(label)")
                }
                // An aborted connect leaves BlueZ half-connected: let it settle first.
                try? await waitUntil(timeout: .seconds(2), operation: "connect retry") {
                    !($0.device?.connected ?? false)
                }
                try await Task.sleep(for: delay)
                delay *= 2
            }
        }
    }

    /// Waits for `ServicesResolved`, failing early when the link drops, and at once when BlueZ
    /// answers the property with something else than a boolean.
    func waitForServices(path: String) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + settings.servicesResolvedTimeout
        while true {
            // The signal may have come before the wait, or malformed: read the property itself.
            let asked = state.withLock { s in
                s.malformedServicesResolved = false
                return s.servicesResolvedNews
            }
            if let v = try? await bus.get(
                path, BlueZNames.device, "ServicesResolved", operation: "reading ServicesResolved")
            {
                guard case .bool(let resolved) = v.unwrapped else {
                    throw BlueZError.unexpectedReply(
                        operation: "resolving the services of \(label)",
                        detail: "ServicesResolved of type '\(v.unwrapped.signature)' instead of a boolean")
                }
                state.withLock { $0.read(servicesResolved: resolved, askedAt: asked) }
            }
            do {
                try await waitUntil(
                    timeout: max(clock.now.duration(to: deadline), .zero), operation: "resolving services"
                ) {
                    !($0.device?.connected ?? false) || ($0.device?.servicesResolved ?? false)
                        || $0.malformedServicesResolved
                }
            } catch BlueZError.timeout {
                await disconnect()
                throw BlueZError.servicesNeverResolved(device: label, after: settings.servicesResolvedTimeout)
            }
            if !(state.withLock { $0.malformedServicesResolved }) { break }
        }
        guard state.withLock({ $0.device?.connected ?? false }) else {
            throw BlueZError.connectFailed(
                device: label, message: "the board dropped the connection while its services were being resolved")
        }
    }

    /// Finds out at connect time whether the board wants a bond: subscribing to its flashing
    /// characteristic (which the flows do next anyway) is refused without one. Pairs then, so
    /// that a refusal is reported as such instead of as a board that never answers.
    func pairIfAsked(_ table: GATTTable, timeout: Duration) async throws {
        guard !(state.withLock { $0.device?.paired ?? false }),
            let probe = [PartialFlashingGATT.characteristic, SMPGATT.characteristic].first(where: {
                table.characteristics[$0] != nil
            }),
            let path = table.characteristics[probe]
        else { return }
        do {
            try await bus.rawCall(path, BlueZNames.gattCharacteristic, "StartNotify", timeout: timeout)
        } catch let error as DBusError where BlueZError.needsPairing(error) {
            guard settings.pairWhenRequired else {
                throw BlueZError.pairingRefused(
                    device: label, message: "the board requires a bond, and pairing is turned off")
            }
            try await pair()
        } catch {
            // Anything else is for the flow to meet and report.
        }
    }

    /// Pairs (Just Works, through a NoInputNoOutput agent) and marks the board trusted.
    func pair() async throws {
        let path = state.withLock { $0.devicePath }
        let agent = try await BlueZAgent.register(on: bus)
        defer { Task { [bus] in await agent.unregister(on: bus) } }
        do {
            try await bus.rawCall(path, BlueZNames.device, "Pair", timeout: .seconds(60))
        } catch let error as DBusError where error.name == "org.bluez.Error.AlreadyExists" {
            // Already bonded.
        } catch let error as DBusError {
            switch BlueZError.from(error, operation: label) {
            case .pairingRefused(_, let message): throw BlueZError.pairingRefused(device: label, message: message)
            case .failed(_, let message): throw BlueZError.pairingRefused(device: label, message: message)
            case let other: throw other
            }
        }
        try await bus.set(path, BlueZNames.device, "Trusted", .bool(true), operation: "trusting \(label)")
        state.withLock { $0.device?.paired = true }
    }

    /// The GATT table, read again when BlueZ announced changes below the device.
    func currentGATT(operation: String) async throws -> GATTTable {
        if let table = state.withLock({ $0.gattDirty ? nil : $0.gatt }) { return table }
        let tree = try await bus.objects()
        let (table, violation) = state.withLock { s -> (GATTTable, String?) in
            s.gatt = tree.gatt(under: s.devicePath)
            s.gattDirty = false
            let before = s.violation
            if let problem = s.gatt.malformed.first { s.note(problem) }
            return (s.gatt, before == nil ? s.violation : nil)
        }
        if let violation { sinks.violation(violation) }
        return table
    }

    /// Waits until `condition` holds on the state, or throws `BlueZError.timeout`.
    func waitUntil(timeout: Duration, operation: String, _ condition: @escaping @Sendable (BlueZLinkState) -> Bool)
        async throws
    {
        let ticks = sinks.ticks()
        if state.withLock({ condition($0) }) { return }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in ticks where self.state.withLock({ condition($0) }) { return true }
                return false
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            let met = try await group.next() ?? false
            group.cancelAll()
            if !met {
                try Task.checkCancellation()
                throw BlueZError.timeout(operation: operation, after: timeout)
            }
        }
    }
}
