import DBus

/// `/org/bluez` (AgentManager1) and the adapter (Adapter1): power, discovery sessions and
/// filters, device removal.
extension FakeBlueZ {
    /// How often the board of device `i` advertises in its current mode: the first report
    /// reaches the adapter one interval after discovery starts or the board boots (a scanner
    /// that listens all the time hears the next advertising event). Pairing mode 200 ms (CODAL
    /// `MicroBitBLEManager.cpp` `pairingMode`, DAL same file `pairingMode`), application mode
    /// 50 ms (`init`, `MICROBIT_BLE_ADVERTISING_INTERVAL` in CODAL `inc/MicroBitConfig.h`, DAL
    /// `inc/core/MicroBitConfig.h`), the V2 bootloader 25 ms (`sdk_config.h`
    /// `NRF_DFU_BLE_ADV_INTERVAL` 40 × 0.625 ms, used by `nrf_dfu_ble.c` `advertising_start`).
    /// The legacy bootloader's interval was not read in its source: 25 ms stands for it too.
    static func advertisingInterval(_ i: Int, _ s: FakeState) -> Duration {
        let board = s.board(of: i)
        if board.inNordicBootloader { return .milliseconds(25) }
        return board.mode == .pairing ? .milliseconds(200) : .milliseconds(50)
    }

    /// Each board's next advertisement reaches the adapter after its interval. At time scale 0
    /// every interval is nothing: the boards are reported together, in their order.
    func scheduleAdvertisements(_ devices: [Int], _ s: inout FakeState) {
        let groups = Dictionary(grouping: devices) { options.timeScale > 0 ? Self.advertisingInterval($0, s) : .zero }
        for (interval, group) in groups.sorted(by: { $0.key < $1.key }) {
            schedule(.advertise(devices: group.sorted()), after: interval, minimumReal: .milliseconds(2), &s)
        }
    }

    func exportAdapter() throws {
        for (interface, members) in BlueZ.members { server.describe(interface: interface, members) }
        try server.add(path: BlueZ.rootPath, interfaces: [BlueZ.agentManager: [:]]) { call in
            switch call.member {
            case "RegisterAgent": try call.expectSignature("os")
            case "UnregisterAgent", "RequestDefaultAgent": try call.expectSignature("o")
            default:
                throw DBusError(name: DBusErrorName.unknownMethod.rawValue, message: "Unknown method \(call.member)")
            }
            return []
        }
        for adapter in options.effectiveAdapters {
            try server.add(
                path: BlueZ.rootPath + "/" + adapter.name, interfaces: [BlueZ.adapter: adapterProperties(adapter)],
                methods: { [weak self] call in try self?.adapterCall(call) ?? [] },
                setter: { [weak self] interface, name, value in try self?.setAdapterProperty(name, value) })
        }
        try locked { s in
            for i in s.devices.indices where s.devices[i].paired && s.devices[i].owner == nil { exportDevice(i, &s) }
        }
    }

    private func adapterProperties(_ adapter: FakeAdapter) -> [String: DBusValue] {
        [
            "Address": .string(adapter.address), "AddressType": .string("public"),
            "Name": .string("bitflash-fake"),
            "Alias": .string("bitflash-fake"), "Class": .uint32(0), "Powered": .bool(true),
            "Discoverable": .bool(false),
            "DiscoverableTimeout": .uint32(180), "Pairable": .bool(true), "PairableTimeout": .uint32(0),
            "Discovering": .bool(false), "UUIDs": .strings([]), "Modalias": .string("usb:v1D6Bp0246d0542"),
            "Roles": .strings(["central", "peripheral"])
        ]
    }

    private func adapterCall(_ call: DBusMethodCall) throws -> [DBusValue] {
        switch call.member {
        case "StartDiscovery":
            try call.expectSignature("")
            try locked { s in
                guard s.powered else { throw BlueZ.notReady }
                guard !s.sessions.contains(call.sender) else { throw BlueZ.inProgress }
                let first = s.sessions.isEmpty
                s.sessions.insert(call.sender)
                if first { setAdapter(["Discovering": .bool(true)]) }
                scheduleAdvertisements(Array(s.devices.indices), &s)
            }
        case "StopDiscovery":
            try call.expectSignature("")
            try locked { s in
                guard s.powered else { throw BlueZ.notReady }
                guard s.sessions.remove(call.sender) != nil else { throw BlueZ.error("Failed", "No discovery started") }
                if s.sessions.isEmpty { discoveryStopped(&s) }
            }
        case "SetDiscoveryFilter":
            try call.expectSignature("a{sv}")
            let filter = try Self.discoveryFilter(try call.arguments[0].properties())
            try locked { s in s.filters[call.sender] = filter }
        case "GetDiscoveryFilters":
            try call.expectSignature("")
            return [.strings(["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"])]
        case "RemoveDevice":
            try call.expectSignature("o")
            let path = try call.arguments[0].objectPath()
            try locked { s in
                guard let i = s.index(ofDevice: path), s.devices[i].exported else { throw BlueZ.doesNotExist }
                removeDevice(i, &s)
            }
        default:
            throw DBusError(
                name: DBusErrorName.unknownMethod.rawValue, message: "Unknown method \(call.member) on \(BlueZ.adapter)"
            )
        }
        return []
    }

    /// The filter of `SetDiscoveryFilter`, checked as `parse_discovery_filter_dict` does.
    static func discoveryFilter(_ entries: [String: DBusValue]) throws -> DiscoveryFilter {
        var filter = DiscoveryFilter()
        for (key, value) in entries {
            do {
                switch key {
                case "UUIDs": filter.uuids = Set(try value.strings().map { $0.lowercased() })
                case "RSSI": filter.rssi = try value.int16()
                case "Pathloss": _ = try value.uint16()
                case "Transport":
                    filter.transport = try value.string()
                    guard ["auto", "le", "bredr"].contains(filter.transport) else { throw BlueZ.invalidArguments }
                case "DuplicateData", "Discoverable", "AutoConnect": _ = try value.bool()
                case "Pattern": filter.pattern = try value.string()
                default: throw BlueZ.invalidArguments
                }
            } catch {
                throw BlueZ.invalidArguments
            }
        }
        return filter
    }

    private func setAdapterProperty(_ name: String, _ value: DBusValue) throws {
        switch name {
        case "Powered":
            let on = try value.bool()
            try locked { s in
                s.powered = on
                guard !on else { return }
                for i in s.devices.indices { dropLink(i, &s) }
                if !s.sessions.isEmpty {
                    s.sessions.removeAll()
                    discoveryStopped(&s)
                }
            }
        case "Alias", "Discoverable", "DiscoverableTimeout", "Pairable", "PairableTimeout":
            break
        default:
            throw DBusError(name: DBusErrorName.propertyReadOnly.rawValue, message: "Property \(name) is read-only")
        }
    }

    func setAdapter(_ changes: [String: DBusValue]) {
        for adapter in options.effectiveAdapters {
            emit("adapter properties") {
                try server.setProperties(path: BlueZ.rootPath + "/" + adapter.name, interface: BlueZ.adapter, changes)
            }
        }
    }

    /// The board's advertisement reaches the adapter, and BlueZ does with it what 5.66 does
    /// (`FakeState.outcome`): a new device object (InterfacesAdded), a known one's name and
    /// RSSI (PropertiesChanged; with a filter every report signals its RSSI, B566
    /// `device_set_rssi_with_delta(dev, rssi, 0)`), or nothing.
    func advertise(_ i: Int, _ s: inout FakeState) {
        let d = s.devices[i]
        guard !s.stopped, s.powered, !d.connected, let ad = s.advertisement(of: i) else { return }
        let outcome = s.outcome(of: d, ad)
        guard outcome == .created || outcome == .updated else { return }
        let renamed = d.knownName != ad.name
        let newUUIDs = d.resolvedUUIDs == nil && d.knownUUIDs != ad.uuids
        s.devices[i].knownName = ad.name
        s.devices[i].knownUUIDs = ad.uuids
        s.devices[i].rssiValid = true
        if outcome == .created {
            exportDevice(i, &s)
            note(
                "[\(d.name)] discovered at \(d.spec.address) as \"\(ad.name)\"\(ad.discoverable ? "" : " (not discoverable)")"
            )
            return
        }
        var changes: [String: DBusValue] = ["RSSI": .int16(d.behaviour.rssi)]
        if renamed {
            changes["Name"] = .string(ad.name)
            if d.alias == nil { changes["Alias"] = .string(ad.name) }
        }
        if newUUIDs { changes["UUIDs"] = .strings(ad.uuids) }
        setDevice(i, changes, s)
    }

    /// The last discovery session ended: BlueZ forgets the RSSI of every device
    /// (B566 `discovery_cleanup()` → `invalidate_rssi_and_tx_power()`).
    func discoveryStopped(_ s: inout FakeState) {
        setAdapter(["Discovering": .bool(false)])
        for i in s.devices.indices where s.devices[i].rssiValid {
            s.devices[i].rssiValid = false
            let d = s.devices[i]
            guard d.exported else { continue }
            emit("RSSI invalidated") {
                try server.setProperties(path: d.path, interface: BlueZ.device, [:], invalidated: ["RSSI"])
            }
        }
    }

    /// The board of device `b` booted: its bootloader's hand-over ends when the application
    /// starts (V2 bootloader `nrf_dfu_settings_svci.c` `nrf_dfu_settings_additional_erase`), and
    /// it advertises at the address of its mode.
    func booted(_ b: Int, _ s: inout FakeState) {
        let identities = s.identities(of: b)
        note(
            "[\(s.devices[b].name)] booted into \(s.board(of: b).inNordicBootloader ? "its bootloader" : "its program")"
        )
        if !s.board(of: b).inNordicBootloader {
            for j in identities { s.devices[j].handedOverBond = false }
        }
        scheduleAdvertisements(identities, &s)
    }

    /// A D-Bus client left the bus: its discovery session, filter and notification sessions end.
    func clientLeft(_ name: String, _ s: inout FakeState) {
        s.filters[name] = nil
        if s.sessions.remove(name) != nil, s.sessions.isEmpty { discoveryStopped(&s) }
        for i in s.devices.indices {
            for path in s.devices[i].notifySessions.keys where s.devices[i].notifySessions[path]?.contains(name) == true
            {
                stopNotifySession(i, path: path, sender: name, &s)
            }
        }
    }
}
