import DBus
import Foundation

/// Device1: connecting (with the scenario's failures), pairing, disconnecting, and the link
/// events that follow (services resolved, link lost at a board reset).
extension FakeBlueZ {
    /// GATT discovery after the link is up (modelled; the reply to Connect leaves first).
    static let serviceDiscovery: Duration = .milliseconds(150)
    /// From a board's notification to the client: the next connection event. 7.5 ms is BLE's
    /// shortest connection interval, so no real answer arrives sooner (not even at time scale 0).
    static let notificationLatency: Duration = .microseconds(7500)
    /// Just Works pairing (modelled).
    static let pairingTime: Duration = .milliseconds(400)
    /// The kernel's LE connection timeout.
    static let connectTimeout: Duration = .seconds(20)
    /// The ATT MTU BlueZ asks for in its exchange (`[GATT] ExchangeMTU`).
    static let centralMTU = 517

    func deviceProperties(_ i: Int, _ s: FakeState) -> [String: DBusValue] {
        let d = s.devices[i]
        // Alias is the name, or the address with dashes when no name is known (B566 `device.c`).
        var p: [String: DBusValue] = [
            "Address": .string(d.spec.address), "AddressType": .string("random"),
            "Alias": .string(d.alias ?? d.knownName ?? d.spec.address.replacingOccurrences(of: ":", with: "-")),
            "Paired": .bool(d.paired), "Bonded": .bool(d.bonded),
            "Trusted": .bool(d.trusted), "Blocked": .bool(d.blocked), "LegacyPairing": .bool(false),
            "Connected": .bool(d.connected), "ServicesResolved": .bool(d.resolved), "UUIDs": .strings(d.uuidsProperty),
            "Adapter": .objectPath(s.adapterPath(of: i))
        ]
        if let name = d.knownName { p["Name"] = .string(name) }
        if d.rssiValid { p["RSSI"] = .int16(d.behaviour.rssi) }
        return d.hostile(at: d.path).properties(BlueZ.device, p)
    }

    func exportDevice(_ i: Int, _ s: inout FakeState) {
        let path = s.devices[i].path
        let properties = deviceProperties(i, s)
        emit("device \(path)") {
            try server.add(
                path: path, interfaces: [BlueZ.device: properties],
                methods: { [weak self] call in try await self?.deviceCall(i, call) ?? [] },
                setter: { [weak self] _, name, value in try self?.setDeviceProperty(i, name, value) },
                concurrent: true)
        }
        s.devices[i].exported = true
    }

    /// Changes Device1 properties and emits `PropertiesChanged` (hostile boards distort them).
    func setDevice(_ i: Int, _ changes: [String: DBusValue], _ s: FakeState) {
        let d = s.devices[i]
        guard d.exported else { return }
        let distorted = d.hostile(at: d.path).properties(BlueZ.device, changes)
        guard !distorted.isEmpty else { return }
        emit("device properties") { try server.setProperties(path: d.path, interface: BlueZ.device, distorted) }
    }

    private func deviceCall(_ i: Int, _ call: DBusMethodCall) async throws -> [DBusValue] {
        guard call.interface == nil || call.interface == BlueZ.device else {
            throw DBusError(name: DBusErrorName.unknownMethod.rawValue, message: "Unknown method \(call.member)")
        }
        try call.expectSignature(call.member == "ConnectProfile" || call.member == "DisconnectProfile" ? "s" : "")
        switch call.member {
        case "Connect": try await connect(i, forPairing: false)
        case "Disconnect":
            try locked { s in
                guard s.devices[i].connected || s.devices[i].connecting else { throw BlueZ.notConnected }
                note("[\(s.devices[i].name)] disconnected by the client")
                dropLink(i, &s)
            }
        case "Pair": try await pair(i)
        case "CancelPairing":
            try locked { s in
                guard s.devices[i].pairing else { throw BlueZ.doesNotExist }
                s.devices[i].pairingCancelled = true
            }
        case "ConnectProfile", "DisconnectProfile": throw BlueZ.notSupported
        default:
            throw DBusError(
                name: DBusErrorName.unknownMethod.rawValue, message: "Unknown method \(call.member) on \(BlueZ.device)")
        }
        return []
    }

    private enum ConnectStart { case alreadyConnected, wait }

    /// `Device1.Connect`: the scenario's failures first, then the link once the board
    /// advertises; the reply comes when the link is up, `ServicesResolved` later.
    private func connect(_ i: Int, forPairing: Bool) async throws {
        let start: ConnectStart = try locked { s in
            guard s.powered else { throw BlueZ.notReady }
            let d = s.devices[i]
            if d.connected { return .alreadyConnected }
            if d.connecting || (d.pairing && !forPairing) { throw BlueZ.inProgress }
            if !d.connectFailures.isEmpty {
                let failure = s.devices[i].connectFailures.removeFirst()
                note("[\(d.name)] Connect fails: \(failure.rawValue)")
                switch failure {
                case .inProgress: throw BlueZ.inProgress
                case .abortByLocal:
                    setDevice(i, ["Connected": .bool(true)], s)
                    setDevice(i, ["Connected": .bool(false)], s)
                    throw BlueZ.abortByLocal
                }
            }
            s.devices[i].connecting = true
            return .wait
        }
        guard start == .wait else { return }
        let deadline = ContinuousClock.now + max(Self.connectTimeout * max(0, options.timeScale), .seconds(1))
        while true {
            let done: Bool = try locked { s in
                guard s.devices[i].connecting, !s.stopped else { throw BlueZ.abortByLocal }
                guard s.isAdvertising(i) else {
                    if ContinuousClock.now >= deadline {
                        s.devices[i].connecting = false
                        throw BlueZ.abortByLocal
                    }
                    return false
                }
                do { try refuseBeyondLimit(i, s) } catch {
                    s.devices[i].connecting = false
                    throw error
                }
                establishLink(i, &s)
                return true
            }
            if done { return }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    private func establishLink(_ i: Int, _ s: inout FakeState) {
        s.devices[i].connecting = false
        s.devices[i].connected = true
        let adapter = s.adapterPath(of: i)
        s.peakConnections[adapter] = max(s.peakConnections[adapter] ?? 0, s.connections(onAdapter: adapter))
        s.devices[i].linkEpoch += 1
        s.devices[i].mtu = 23
        note("[\(s.devices[i].name)] connected")
        setDevice(i, ["Connected": .bool(true)], s)
        if !s.devices[i].behaviour.servicesNeverResolve {
            schedule(
                .resolve(device: i, epoch: s.devices[i].linkEpoch), after: Self.serviceDiscovery,
                minimumReal: .milliseconds(2), &s)
        }
    }

    /// `Device1.Pair` (Just Works): connects first when needed, as BlueZ does.
    private func pair(_ i: Int) async throws {
        try locked { s in
            guard s.powered else { throw BlueZ.notReady }
            let d = s.devices[i]
            if d.paired { throw BlueZ.alreadyExists }
            if d.pairing { throw BlueZ.inProgress }
            if d.behaviour.refusesPairing {
                note("[\(d.name)] refuses pairing")
                throw BlueZ.authenticationFailed
            }
            if s.board(of: i).inNordicBootloader {
                // Both bootloaders answer a pairing request "pairing not supported" (V2 bootloader
                // `nrf_dfu_ble.c` L751-768; SDK 8 `dfu_transport_ble.c` L813-830).
                note("[\(d.name)] the bootloader does not support pairing")
                throw BlueZ.authenticationFailed
            }
            s.devices[i].pairing = true
            s.devices[i].pairingCancelled = false
        }
        do {
            try await connect(i, forPairing: true)
            try? await Task.sleep(for: Self.pairingTime * max(0, options.timeScale))
            try locked { s in
                s.devices[i].pairing = false
                if s.devices[i].pairingCancelled {
                    throw BlueZ.error("AuthenticationCanceled", "Authentication Canceled")
                }
                guard s.devices[i].connected else { throw BlueZ.error("AuthenticationFailed", "Authentication Failed") }
                s.devices[i].paired = true
                s.devices[i].bonded = true
                s.devices[i].boardBonded = true
                note("[\(s.devices[i].name)] paired (Just Works)")
                setDevice(i, ["Paired": .bool(true), "Bonded": .bool(true)], s)
                securityEvent(i, newPairing: true, &s)
            }
        } catch {
            _ = try? locked { s in s.devices[i].pairing = false }
            throw error
        }
    }

    private func setDeviceProperty(_ i: Int, _ name: String, _ value: DBusValue) throws {
        try locked { s in
            switch name {
            case "Trusted": s.devices[i].trusted = try value.bool()
            case "Blocked": s.devices[i].blocked = try value.bool()
            case "Alias": s.devices[i].alias = try value.string()
            case "WakeAllowed": break
            default:
                throw DBusError(name: DBusErrorName.propertyReadOnly.rawValue, message: "Property \(name) is read-only")
            }
        }
    }

    /// GATT discovery is over: the GATT objects appear, then `ServicesResolved` goes true.
    ///
    /// With BlueZ's GATT cache the objects of the last connection are still there: the primary
    /// service discovery keeps the services whose handle range and UUID did not change (and
    /// their characteristics, even if the board changed them) and replaces the others, with
    /// `InterfacesRemoved` and `InterfacesAdded` before `ServicesResolved` (FakeGATTTable
    /// `rediscovered(over:)`). A board that reset into its bootloader therefore shows the
    /// bootloader's FE59 (or 1530) service under new paths, as BlueZ 5.66 does.
    func resolveServices(_ i: Int, epoch: Int, _ s: inout FakeState) {
        let d = s.devices[i]
        guard d.connected, d.linkEpoch == epoch, !d.resolved else { return }
        let board = s.board(of: i)
        // The MTU exchange happens on every connection, with what the running firmware supports.
        let mtu = UInt16(min(Self.centralMTU, board.attMTU))
        s.devices[i].mtu = mtu
        let discovered = FakeGATTTable(board: board, devicePath: d.path)
        let (table, kept) = d.gatt.map { discovered.rediscovered(over: $0) } ?? (discovered, [])
        let gone = d.gatt?.paths(except: kept) ?? []
        emit("GATT objects") {
            for path in gone.reversed() { try server.remove(path: path) }
            for service in table.services where !kept.contains(service.path) {
                try server.add(
                    path: service.path,
                    interfaces: [
                        BlueZ.gattService: d.hostile(at: service.path).properties(
                            BlueZ.gattService, table.serviceProperties(service, devicePath: d.path))
                    ])
                for c in table.characteristics where c.servicePath == service.path {
                    let path = c.path
                    try server.add(
                        path: path,
                        interfaces: [
                            BlueZ.gattCharacteristic: d.hostile(at: path).properties(
                                BlueZ.gattCharacteristic, table.characteristicProperties(c, mtu: mtu))
                        ], methods: { [weak self] call in try self?.characteristicCall(i, path: path, call) ?? [] })
                    try server.add(
                        path: c.descriptorPath, interfaces: [BlueZ.gattDescriptor: table.descriptorProperties(c)],
                        methods: { [weak self] call in try self?.descriptorCall(i, path: path, call) ?? [] })
                }
            }
        }
        for path in gone {
            s.devices[i].notifySessions[path] = nil
            s.devices[i].values[path] = nil
        }
        s.devices[i].gatt = table
        s.devices[i].resolved = true
        let uuids = table.services.map(\.uuid.uuidString)
        var changes: [String: DBusValue] = ["ServicesResolved": .bool(true)]
        if s.devices[i].uuidsProperty != uuids { changes["UUIDs"] = .strings(uuids) }
        s.devices[i].resolvedUUIDs = uuids
        if let name = s.gapName(i), name != d.knownName {
            // BlueZ reads the GAP Device Name of every connected board (`profiles/gap/gas.c`):
            // "DfuTarg" while the bootloader runs at the board's address, the board's name after.
            s.devices[i].knownName = name
            changes["Name"] = .string(name)
            if d.alias == nil { changes["Alias"] = .string(name) }
        }
        let reused = kept.isEmpty ? "" : ", \(kept.count) from the cache"
        note("[\(d.name)] services resolved (\(table.services.count) services\(reused), MTU \(mtu))")
        setDevice(i, changes, s)
    }

    /// The link is gone (client disconnect, board reset, RF loss): ServicesResolved and
    /// Connected go false, the GATT objects disappear, notification sessions end.
    func dropLink(_ i: Int, _ s: inout FakeState) {
        let d = s.devices[i]
        guard d.connected || d.connecting else { return }
        s.devices[i].connecting = false
        if d.resolved { setDevice(i, ["ServicesResolved": .bool(false)], s) }
        if d.connected { setDevice(i, ["Connected": .bool(false)], s) }
        s.devices[i].connected = false
        s.devices[i].resolved = false
        s.devices[i].linkEpoch += 1
        closeAcquiredSockets(i, &s)
        // With the GATT cache the objects stay (calls on them fail "Not connected"; notification
        // sessions are replayed at the next connection); without it they go.
        if !d.behaviour.gattCache { removeGATT(i, &s) }
        if d.connected {
            s.devices[s.boardIndex(i)].host.linkDropped()
            save(i, s)
        }
    }

    /// Removes the GATT objects (InterfacesRemoved, children first) and their sessions.
    func removeGATT(_ i: Int, _ s: inout FakeState) {
        closeAcquiredSockets(i, &s)
        if let table = s.devices[i].gatt {
            emit("GATT objects removed") {
                for path in table.paths.reversed() { try server.remove(path: path) }
            }
        }
        s.devices[i].gatt = nil
        s.devices[i].notifySessions = [:]
        s.devices[i].values = [:]
    }

    /// `Adapter1.RemoveDevice`: the link drops, the object, its GATT cache and its bond are gone.
    func removeDevice(_ i: Int, _ s: inout FakeState) {
        dropLink(i, &s)
        removeGATT(i, &s)
        let path = s.devices[i].path
        emit("device removed") { try server.remove(path: path) }
        s.devices[i].exported = false
        s.devices[i].paired = false
        s.devices[i].bonded = false
        s.devices[i].trusted = false
        s.devices[i].staleBond = false
        note("[\(s.devices[i].name)] removed")
    }
}
