import DBus
import SimulatedBoard
import Transport

/// The peripheral's side of BlueZ: the exported objects and their calls, registration, the
/// central's link, and what the board asks for (notifications, work, resets).
extension SimulatedPeripheral {
    private typealias Names = BlueZServerNames

    func exportObjects() throws {
        for (interface, members) in PeripheralGATTApplication.members {
            server.describe(interface: interface, members)
            advertisementServer.describe(interface: interface, members)
        }
        try exportApplication(application)
        try advertisementServer.add(
            path: options.advertisementPath,
            interfaces: [Names.advertisement: application.advertisementProperties(name: advertisedName)],
            methods: { [weak self] call in
                guard call.member == "Release" else {
                    throw DBusError(
                        name: DBusErrorName.unknownMethod.rawValue, message: "Unknown method \(call.member)")
                }
                self?.note("BlueZ released the advertisement")
                return []
            })
    }

    /// Exports the services and characteristics of `application`.
    func exportApplication(_ application: PeripheralGATTApplication) throws {
        for s in application.services {
            try server.add(path: s.path, interfaces: [Names.gattService: application.serviceProperties(s)])
        }
        for c in application.characteristics {
            try server.add(
                path: c.path, interfaces: [Names.gattCharacteristic: application.characteristicProperties(c)],
                methods: { [weak self] call in
                    guard let self else { throw DBusError(name: "org.bluez.Error.Failed", message: "board stopped") }
                    return try self.characteristicCall(c, call)
                })
        }
    }

    /// The board booted into another mode with another table (its Nordic bootloader, or its
    /// application after an update): unregister the old GATT application, export and register
    /// the new one, and advertise with the new name and service.
    func switchApplication(to new: PeripheralGATTApplication) async {
        let old = state.withLock { s -> PeripheralGATTApplication in
            let old = s.application
            s.application = new
            s.notifying.removeAll()
            // The old characteristics' sockets go with them (their paths are reused by the new table).
            for socket in s.writeSockets.values { socket.close() }
            for socket in s.notifySockets.values { socket.close() }
            s.writeSockets.removeAll()
            s.notifySockets.removeAll()
            return old
        }
        _ = try? await connection.call(
            destination: Names.busName, path: options.adapterPath, interface: Names.gattManager,
            method: "UnregisterApplication", arguments: [.objectPath(options.applicationPath)])
        for path in (old.characteristics.map(\.path) + old.services.map(\.path)) { try? server.remove(path: path) }
        do {
            try exportApplication(new)
            let advertised = new.advertisementProperties(name: advertisedName)
            try advertisementServer.setProperties(
                path: options.advertisementPath, interface: Names.advertisement, advertised,
                invalidated: advertised["ServiceUUIDs"] == nil ? ["ServiceUUIDs"] : [])
            _ = try await connection.call(
                destination: Names.busName, path: options.adapterPath, interface: Names.gattManager,
                method: "RegisterApplication", arguments: [.objectPath(options.applicationPath), .propertyMap([:])])
            note(
                "GATT application switched: \(new.services.map(\.uuid.uuidString).joined(separator: ", ")) as \"\(advertisedName)\""
            )
        } catch {
            note("cannot switch the GATT application: \(error)")
        }
    }

    /// Checks that BlueZ has the adapter, and switches it on.
    func checkAdapter() async throws {
        let objects: [String: [String: [String: DBusValue]]]
        do {
            objects = try await connection.call(
                destination: Names.busName, path: "/", interface: DBusStandard.objectManager,
                method: "GetManagedObjects", timeout: .seconds(10)
            )
            .argument(0).managedObjects()
        } catch let e as DBusError { throw PeripheralError.bluetoothUnavailable(e) }
        let adapters = objects.filter { $0.value[Names.adapter] != nil }.keys.map {
            String($0.split(separator: "/").last ?? "")
        }
        guard let adapter = objects[options.adapterPath]?[Names.adapter] else {
            throw PeripheralError.noAdapter(options.adapterName, available: adapters.sorted())
        }
        if case .string(let address)? = adapter["Address"] { state.withLock { $0.adapterAddress = address } }
        if adapter["Powered"] != .bool(true) {
            do {
                _ = try await connection.call(
                    destination: Names.busName, path: options.adapterPath, interface: DBusStandard.properties,
                    method: "Set", arguments: [.string(Names.adapter), .string("Powered"), .variant(.bool(true))])
            } catch let e as DBusError { throw PeripheralError.registration("switching \(options.adapterName) on", e) }
        }
    }

    func register() async throws {
        do {
            _ = try await connection.call(
                destination: Names.busName, path: options.adapterPath, interface: Names.gattManager,
                method: "RegisterApplication", arguments: [.objectPath(options.applicationPath), .propertyMap([:])])
        } catch let e as DBusError { throw PeripheralError.registration("the GATT application", e) }
        do {
            try await registerAdvertisement()
        } catch let e as DBusError { throw PeripheralError.registration("the advertisement", e) }
    }

    private func registerAdvertisement() async throws {
        _ = try await connection.call(
            destination: Names.busName, path: options.adapterPath, interface: Names.advertisingManager,
            method: "RegisterAdvertisement", arguments: [.objectPath(options.advertisementPath), .propertyMap([:])])
    }

    /// Follows the centrals' links on the adapter: a link that drops makes the board forget
    /// its per-link state, as a real board does.
    func watchLinks() async throws {
        let rule = DBusMatchRule.propertiesChanged(
            sender: Names.busName, pathNamespace: options.adapterPath, interface: Names.device)
        let stream: AsyncStream<DBusSignal>
        do { stream = try await connection.signals(matching: rule) } catch let e as DBusError {
            throw PeripheralError.bluetoothUnavailable(e)
        }
        Task { [weak self] in
            for await signal in stream {
                guard let self, let changes = try? signal.arguments.argument(1).properties(),
                    case .bool(let connected)? = changes["Connected"]
                else { continue }
                self.locked { s in
                    if connected {
                        s.counters.links += 1
                        self.note("central \(signal.path) connected")
                    } else {
                        self.note("central \(signal.path) disconnected")
                        if s.central == signal.path { s.central = nil }
                        s.notifying.removeAll()
                        s.host.linkDropped()
                        self.options.onBoardChanged(s.host.board)
                    }
                }
            }
        }
    }

    // MARK: characteristic calls

    func characteristicCall(_ c: PeripheralGATTApplication.Characteristic, _ call: DBusMethodCall) throws -> [DBusValue]
    {
        switch call.member {
        case "ReadValue":
            try call.expectSignature("a{sv}")
            guard c.flags.contains("read") else {
                throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
            }
            return [server.properties(path: c.path, interface: Names.gattCharacteristic)?["Value"] ?? .bytes([])]
        case "WriteValue":
            try call.expectSignature("aya{sv}")
            let bytes = try call.arguments[0].bytes()
            let options = (try? call.arguments[1].properties()) ?? [:]
            let kind: WriteKind
            switch options["type"] {
            case .string("command")?: kind = .command
            case .string("request")?: kind = .request
            default: kind = c.flags.contains("write") ? .request : .command
            }
            locked { s in
                noteOptions(options, &s)
                deliver(bytes, to: c, kind: kind, &s)
            }
            return []
        case "AcquireWrite", "AcquireNotify":
            try call.expectSignature("a{sv}")
            return try acquire(
                c, write: call.member == "AcquireWrite", options: (try? call.arguments[0].properties()) ?? [:])
        case "StartNotify", "StopNotify":
            let on = call.member == "StartNotify"
            guard c.canNotify else {
                throw DBusError(name: "org.bluez.Error.NotSupported", message: "Notify not supported")
            }
            locked { s in
                if on { s.notifying.insert(c.path) } else { s.notifying.remove(c.path) }
            }
            try server.setProperties(path: c.path, interface: Names.gattCharacteristic, ["Notifying": .bool(on)])
            return []
        default:
            throw DBusError(
                name: "org.bluez.Error.NotSupported", message: "\(call.member) is not supported by this board")
        }
    }

    /// The central and the ATT MTU bluetoothd names in a call's options.
    private func noteOptions(_ options: [String: DBusValue], _ s: inout PeripheralState) {
        if case .objectPath(let device)? = options["device"] { s.central = device }
        if case .uint16(let mtu)? = options["mtu"] { s.counters.mtu = max(s.counters.mtu ?? 0, Int(mtu)) }
    }

    /// A write that reached the board (through `WriteValue` or a socket).
    private func deliver(
        _ bytes: [UInt8], to c: PeripheralGATTApplication.Characteristic, kind: WriteKind, _ s: inout PeripheralState
    ) {
        let step = s.host.write(bytes, to: c.characteristic, kind: kind)
        if step.delivered { s.counters.writes += 1 } else { s.counters.droppedWrites += 1 }
        apply(step, &s)
    }

    /// `AcquireWrite`/`AcquireNotify` from bluetoothd: a `SOCK_SEQPACKET` pair, one end
    /// returned with the MTU. Each datagram bluetoothd writes is one write command of a
    /// central; each datagram the board writes is one notification to the subscribed centrals.
    /// bluetoothd closing its end (the last subscriber gone, `ccc_write_cb()`) releases it.
    private func acquire(
        _ c: PeripheralGATTApplication.Characteristic, write: Bool,
        options: [String: DBusValue]
    ) throws -> [DBusValue] {
        guard application.acquire,
            c.flags.contains(write ? "write-without-response" : "notify")
        else {
            throw DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
        }
        let pair: (PacketSocket, DBusFileDescriptor)
        do { pair = try PacketSocket.pair() } catch {
            throw DBusError(name: "org.bluez.Error.Failed", message: "cannot make a socket pair: \(error)")
        }
        let (mine, theirs) = pair
        let datagrams = mine.datagrams()
        let mtu = locked { s -> UInt16 in
            noteOptions(options, &s)
            if write {
                s.writeSockets[c.path]?.close()
                s.writeSockets[c.path] = mine
                s.counters.acquiredWrites += 1
            } else {
                s.notifySockets[c.path]?.close()
                s.notifySockets[c.path] = mine
                s.notifying.insert(c.path)
                s.counters.acquiredNotifies += 1
            }
            return UInt16(clamping: s.counters.mtu ?? 23)
        }
        note("BlueZ acquired the \(write ? "write" : "notify") socket of \(c.characteristic.characteristic)")
        Task { [weak self] in
            for await bytes in datagrams where write {
                self?.locked { s in
                    s.counters.socketWrites += 1
                    self?.deliver(bytes, to: c, kind: .command, &s)
                }
            }
            self?.locked { s in
                if write, s.writeSockets[c.path] === mine { s.writeSockets[c.path] = nil }
                if !write, s.notifySockets[c.path] === mine { s.notifySockets[c.path] = nil }
            }
            mine.close()
            self?.note("BlueZ closed the \(write ? "write" : "notify") socket of \(c.characteristic.characteristic)")
        }
        return [.unixFD(theirs), .uint16(mtu)]
    }

    // MARK: what the board asks for

    func apply(_ step: GATTBoardHost.Step, _ s: inout PeripheralState) {
        for line in step.notes { note(line) }
        for n in step.notifications {
            guard let c = s.application.characteristic(for: n.characteristic) else { continue }
            s.counters.notifications += 1
            if let socket = s.notifySockets[c.path] {
                do {
                    try socket.trySend(n.bytes)
                    s.counters.socketNotifications += 1
                } catch {
                    note("a notification through the socket was lost: \(error)")
                }
                continue
            }
            do {
                try server.setProperties(path: c.path, interface: Names.gattCharacteristic, ["Value": .bytes(n.bytes)])
            } catch {
                note("cannot send a notification: \(error)")
            }
        }
        let now = s.host.now
        for work in step.work {
            // At time scale 0 the board's own timers (the bootloaders' 120 s inactivity reset)
            // would fire before the central could act: they do not run.
            if options.timeScale == 0, work.delay >= .seconds(10) { continue }
            schedule(.work(work, due: now + work.delay), after: work.delay, &s)
        }
        if let down = step.downFor {
            s.counters.resets += 1
            note("board resets: disconnecting the central, back in \(down) (modelled)")
            let central = s.central
            s.central = nil
            s.notifying.removeAll()
            options.onBoardChanged(s.host.board)
            request { [weak self] in await self?.dropLink(central) }
            schedule(.boot, after: down, &s)
        }
    }

    func handle(_ event: PeripheralEvent, _ s: inout PeripheralState) {
        switch event {
        case let .work(work, due):
            // The board's clock reaches the work's time, even when the work runs at once (time scale 0).
            s.host.now = max(s.host.now, due)
            apply(s.host.perform(work), &s)
        case .boot:
            apply(s.host.boot(), &s)
            options.onBoardChanged(s.host.board)
            let table = PeripheralGATTApplication(
                board: s.host.board, rootPath: options.applicationPath,
                acquire: options.acquireSockets)
            let switched = table != s.application
            request { [weak self] in
                guard let self else { return }
                if switched { await self.switchApplication(to: table) }
                do {
                    try await self.registerAdvertisement()
                    self.note("advertising again")
                } catch {
                    self.note("cannot advertise again: \(error)")
                }
            }
        }
    }

    /// A reset: the board stops advertising and the central's link goes down.
    private func dropLink(_ central: String?) async {
        _ = try? await connection.call(
            destination: Names.busName, path: options.adapterPath, interface: Names.advertisingManager,
            method: "UnregisterAdvertisement", arguments: [.objectPath(options.advertisementPath)])
        var centrals = central.map { [$0] } ?? []
        if centrals.isEmpty,
            let objects = try? await connection.call(
                destination: Names.busName, path: "/", interface: DBusStandard.objectManager,
                method: "GetManagedObjects"
            ).argument(0).managedObjects()
        {
            centrals = objects.filter {
                $0.key.hasPrefix(options.adapterPath + "/") && $0.value[Names.device]?["Connected"] == .bool(true)
            }
            .map(\.key)
        }
        for path in centrals {
            do {
                _ = try await connection.call(
                    destination: Names.busName, path: path, interface: Names.device, method: "Disconnect")
            } catch {
                note("cannot disconnect \(path): \(error)")
            }
        }
    }
}
