// A fake BlueZ (`org.bluez`) for tests: simulated boards behind BlueZ's D-Bus API.
//
// HOW TO RUN IT
//
//   1. Start a private bus whose policy lets anyone own `org.bluez` (a session-type config
//      with `<allow own="*"/>`, as `Tests/TestSupport/PrivateBus.swift` writes it):
//        dbus-daemon --config-file=bus.conf --print-address=1 --fork     # prints ADDRESS
//   2. Start the fake on it; it takes the system-bus address, as a client does:
//        DBUS_SYSTEM_BUS_ADDRESS=ADDRESS bitflash sim bluez --sim-state DIR [OPTIONS]
//      Options for one board: --profile P (default: the saved board's, else
//      microbit-v2-mcuboot), --name NAME (default: the saved board's, `sim`),
//      --address AA:BB:CC:DD:EE:FF, --from FILE (put this firmware on the board first, like
//      `bitflash sim reset --from`), --requires-pairing, --refuses-pairing,
//      --connect-failures in-progress,le-connection-abort-by-local, --services-never-resolve,
//      --disconnect-after-writes N, --absent, --stale-bond, --bonded, --gatt-cache, --pairing-mode-only, --in-pairing-mode,
//      --refuses-acquire, --acquired-sockets-close-after N, --bootloader-at-next-address,
//      --hostile MODE[,MODE] [--hostile-seed N],
//      --firmware-hostile KIND[,KIND] (the board's firmware misbehaves, as in `sim campaign --hostile`),
//      --time-scale S (real seconds per modelled second; 0: everything at once; default 1),
//      --for SECONDS, -v (board trace lines on stdout).
//      Or several boards: --scenario FILE.json (the one-board options are then refused):
//        {"timeScale": 0,
//         "boards": [{"state": "sim-1", "profile": "microbit-v2-mcuboot", "name": "BBC micro:bit [zotig]",
//                     "address": "F0:0D:00:00:00:01", "from": "app.hex", "rssi": -60,
//                     "requiresPairing": false, "refusesPairing": false,
//                     "connectFailures": ["in-progress", "le-connection-abort-by-local"],
//                     "servicesNeverResolve": false, "disconnectAfterWrites": 40, "absent": false, "gattCache": false,
//                     "pairingModeOnly": false, "bootloaderAtNextAddress": false,
//                     "staleBond": false, "bonded": false, "startsInPairingMode": false, "hostile": ["wrong-types", "oversized-values", "missing-properties"],
//                     "hostileSeed": 7, "refusesAcquire": false, "acquiredSocketsCloseAfter": 100,
//                     "advertisedUUIDs": ["e97dd91d-251d-470a-a062-fa1922dfa9a8"]}]}
//      Every key but "boards" is optional; "state" names the board's file in the state folder
//      (default `sim`, or `sim-N` for the Nth of several), "from" is relative to the scenario
//      file. A board already saved under that name is used as saved unless "from" is given
//      (with "profile", it must be of that profile); a new one holds the sample program.
//      Unknown keys are refused (exit 65), so a typo cannot give a well-behaved board.
//   3. Wait for the readiness line on stdout, printed last, once `org.bluez` is owned:
//        fake org.bluez ready on hci0 (00:AA:01:00:00:01): N board(s), state DIR
//      It follows one line per board:
//        board sim: F0:0D:00:00:00:01 "NAME" microbit-v2-mcuboot at /org/bluez/hci0/dev_F0_0D_00_00_00_01 (faults)
//      Errors go to stderr: exit 64 (bad options, no private bus), 65 (bad scenario or
//      firmware file), 66 (unreadable file), 69 (cannot own org.bluez on the bus).
//   4. Stop it with SIGTERM or SIGINT (or --for): it prints `stopped; boards saved` and exits 0.
//
//   In Swift tests, skip the process: `FakeBlueZ.start(bus: .address(ADDRESS), boards: [FakeBoard(...)])`
//   and `await fake.stop()` (see Tests/FakeBlueZTests/FakeBus.swift).
//      Each board is also saved to `DIR/<state>.json` whenever its link drops and whenever it
//      boots, so `bitflash sim show --sim-state DIR` shows the flash while the fake runs.
//
// WHAT IT EXPORTS, as BlueZ 5.66 does: `/` ObjectManager; `/org/bluez` AgentManager1;
// `/org/bluez/hci0` Adapter1; `…/dev_XX_XX_XX_XX_XX_XX` Device1 once a discovery reports the
// board's advertisement (bonded devices from the start). Boards advertise as their firmware does
// (FakeAdvertisement.swift: name only in pairing and application mode, DfuTarg with its DFU
// service, whitelisted builds only when bonded and not discoverable), and BlueZ's discovery rules
// decide what a client sees (FakeState.outcome). While connected and resolved, `…/serviceNNNN` GattService1,
// `…/charNNNN` GattCharacteristic1 and `…/descNNNN` GattDescriptor1 for BlueZ's Generic
// Attribute service and the board's partial-flashing (and SMP) services. Notifications are
// `PropertiesChanged(Value)` on the characteristic, or datagrams on the socket of AcquireNotify
// (AcquireWrite and AcquireNotify: FakeBlueZ+Acquire.swift). A board reset (partial flashing's reset
// into pairing mode or END_OF_TRANSMISSION, McuMgr reset) drops the link: ServicesResolved and
// Connected go false, the GATT objects are removed, and the device is connectable again once
// the board has booted (its modelled reboot and MCUboot swap time, times the time scale).
// The GATT cache is off by default (as `[GATT] Cache = no`): the table is read afresh at every
// connect; `--gatt-cache` keeps the objects across disconnects, as BlueZ's default does, and each
// connection's primary service discovery keeps the cached services whose handle range and UUID
// did not change and replaces the others (FakeGATTTable `rediscovered(over:)`).
//
// STOCK BOARDS (`--profile microbit-v2`, `calliope-mini-3`, `microbit-v1`, ...): the GATT table
// is the one the board offers in its current mode. The buttonless entry (FE59 `8EC90004`, a
// write request of `01` on a bonded link; `20 01 07` without a bond) or the micro:bit DFU
// control (`E95D93B1` `01`) resets the board into its Nordic bootloader: the link drops, the
// board comes back advertising "DfuTarg" with only the bootloader's service (FE59 with the
// control point and packet, or the legacy 1530 service) at the same address, or at the address
// + 1 with `--bootloader-at-next-address` (a second Device1 object, open, no bond). The
// bootloader refuses pairing; it needs the bond only when the bonded entry handed one over and
// the application is still valid. `sim reset --stuck-in-bootloader` leaves a board there.

import DBus
import Diagnostics
import Foundation
import LinkModel
import SimulatedBoard
import Synchronization

/// One simulated board the fake BlueZ plays, and how it misbehaves.
public struct FakeBoard: Sendable {
    public var board: SimulatedBoard
    /// The advertised name; nil: the board profile's name.
    public var name: String?
    /// The Bluetooth address, `AA:BB:CC:DD:EE:FF`.
    public var address: String
    public var behaviour: FakeBoardBehaviour
    /// Where the board is saved whenever its link drops or it boots, and at `stop()`.
    public var stateFile: URL?
    /// The board's work durations; nil: its chip family's.
    public var timing: DeviceTiming?

    public init(
        board: SimulatedBoard, name: String? = nil, address: String? = nil,
        behaviour: FakeBoardBehaviour = FakeBoardBehaviour(), stateFile: URL? = nil, timing: DeviceTiming? = nil
    ) {
        self.board = board
        self.name = name
        self.address = (address ?? board.profile.address).uppercased()
        self.behaviour = behaviour
        self.stateFile = stateFile
        self.timing = timing
    }
}

/// How one board's traffic went (see `FakeBlueZ.traffic`).
public struct FakeTraffic: Sendable, Equatable, CustomStringConvertible {
    public var acquiredWrites = 0
    public var acquiredNotifies = 0
    /// Writes that reached the board through an acquired socket, and through `WriteValue`.
    public var socketWrites = 0
    public var valueWrites = 0
    /// Notifications sent through an acquired socket, and as `PropertiesChanged(Value)`.
    public var socketNotifications = 0
    public var signalNotifications = 0

    public var description: String {
        "writes: \(socketWrites) through AcquireWrite sockets (\(acquiredWrites) granted), \(valueWrites) through WriteValue; "
            + "notifications: \(socketNotifications) through AcquireNotify sockets (\(acquiredNotifies) granted), "
            + "\(signalNotifications) as PropertiesChanged"
    }
}

/// The fake's adapter and clock.
public struct FakeBlueZOptions: Sendable {
    /// The adapter's object name (`hci0`) and address.
    public var adapterName = "hci0"
    public var adapterAddress = "00:AA:01:00:00:01"
    /// Several adapters, each with its own connection limit (empty: the one above, no limit).
    /// Every board is seen through every adapter, as BlueZ keeps a device object per adapter.
    public var adapters: [FakeAdapter] = []
    /// Real seconds per modelled second (device work, reboots, connection and discovery
    /// delays); 0 does everything at once, in order.
    public var timeScale: Double = 1
    /// Receives the boards' trace lines and the fake's own notes.
    public var onNote: @Sendable (String) -> Void = { _ in }

    public init() {}
}

/// What went wrong setting up the fake.
public enum FakeBlueZError: Error, Equatable, CustomStringConvertible {
    case invalidAddress(String)
    case duplicateAddress(String)
    case badScenario(String)
    case bus(DBusError)

    public var description: String {
        switch self {
        case .invalidAddress(let a):
            return "'\(a)' is not a Bluetooth address: write six hex bytes, e.g. F0:0D:00:00:00:01"
        case .duplicateAddress(let a): return "two boards have the address \(a): give each board its own"
        case .badScenario(let why): return "bad scenario: \(why)"
        case .bus(let error): return "cannot serve org.bluez: \(error)"
        }
    }
}

/// A fake BlueZ daemon on a D-Bus bus, playing simulated boards in real time.
///
/// ```swift
/// let fake = try await FakeBlueZ.start(bus: .address(address), boards: [FakeBoard(board: board)])
/// // … a BlueZ client scans, connects, flashes …
/// let boards = await fake.stop()
/// ```
public final class FakeBlueZ: Sendable {
    public let connection: DBusConnection
    let server: DBusObjectServer
    let options: FakeBlueZOptions
    let adapterPath: String
    let state: Mutex<FakeState>
    let started = ContinuousClock.now
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    /// Connects to `bus`, exports the adapter (and bonded devices), and owns `org.bluez`.
    /// - Throws: `FakeBlueZError`.
    public static func start(
        bus: DBusBusAddress = .system, boards: [FakeBoard],
        options: FakeBlueZOptions = FakeBlueZOptions()
    ) async throws -> FakeBlueZ {
        var seen = Set<String>()
        for b in boards {
            guard Self.isAddress(b.address) else { throw FakeBlueZError.invalidAddress(b.address) }
            guard seen.insert(b.address).inserted else { throw FakeBlueZError.duplicateAddress(b.address) }
        }
        for b in boards where b.behaviour.bootloaderAtNextAddress {
            let next = Self.nextAddress(after: b.address)
            guard seen.insert(next).inserted else { throw FakeBlueZError.duplicateAddress(next) }
        }
        for a in options.effectiveAdapters where !Self.isAddress(a.address) {
            throw FakeBlueZError.invalidAddress(a.address)
        }
        do {
            let connection = try DBusConnection(bus: bus)
            let fake = try FakeBlueZ(connection: connection, boards: boards, options: options)
            try fake.exportAdapter()
            try await fake.watchClients()
            try await connection.requestName(BlueZ.busName)
            return fake
        } catch let error as DBusError {
            throw FakeBlueZError.bus(error)
        }
    }

    private init(connection: DBusConnection, boards: [FakeBoard], options: FakeBlueZOptions) throws {
        self.connection = connection
        self.options = options
        let paths = options.effectiveAdapters.map { BlueZ.rootPath + "/" + $0.name }
        adapterPath = paths[0]
        server = try DBusObjectServer(connection: connection)
        let adapter = paths[0]
        var devices = boards.map { FakeDevice(spec: $0, adapterPath: adapter) }
        // A bootloader at the next address is a device of its own, playing the same board.
        for (i, b) in boards.enumerated() where b.behaviour.bootloaderAtNextAddress {
            devices.append(FakeDevice.bootloader(of: b, owner: i, adapterPath: adapter))
        }
        // Each further adapter has its own device object of every board, playing the same board.
        for path in paths.dropFirst() {
            for (i, b) in boards.enumerated() {
                var mirror = FakeDevice(spec: b, adapterPath: path, owner: i)
                mirror.mirror = true
                devices.append(mirror)
            }
        }
        // And of every bootloader at the next address: BlueZ keeps a device per adapter that saw it.
        for path in paths.dropFirst() {
            for (i, b) in boards.enumerated() where b.behaviour.bootloaderAtNextAddress {
                var mirror = FakeDevice.bootloader(of: b, owner: i, adapterPath: path)
                mirror.mirror = true
                devices.append(mirror)
            }
        }
        state = Mutex(FakeState(devices: devices))
    }

    /// The boards as they stand now.
    public var boards: [SimulatedBoard] { state.withLock { $0.devices.filter { $0.owner == nil }.map(\.host.board) } }

    /// How each board's writes and notifications travelled: through the sockets of
    /// `AcquireWrite`/`AcquireNotify` or through `WriteValue` and `PropertiesChanged`; a board's
    /// bootloader at its next address comes after the boards, as a device of its own.
    public var traffic: [FakeTraffic] {
        state.withLock { s in
            s.devices.map { d in
                FakeTraffic(
                    acquiredWrites: d.acquiredWrites, acquiredNotifies: d.acquiredNotifies,
                    socketWrites: d.socketWrites,
                    valueWrites: d.writesDelivered - d.socketWrites, socketNotifications: d.socketNotifications,
                    signalNotifications: d.signalNotifications)
            }
        }
    }

    /// The object path of each board's `Device1` (exported or not yet).
    public var devicePaths: [String] { state.withLock { $0.devices.filter { $0.owner == nil }.map(\.path) } }

    /// Releases `org.bluez`, completes resets in progress, saves the boards and closes the
    /// connection. Returns the boards as they stand.
    public func stop() async -> [SimulatedBoard] {
        try? await connection.releaseName(BlueZ.busName)
        watcher.withLock { $0?.cancel() }
        let boards = state.withLock { s -> [SimulatedBoard] in
            s.stopped = true
            for i in s.devices.indices where s.devices[i].owner == nil {
                if s.devices[i].host.isDown { _ = s.devices[i].host.boot() }
                save(i, s)
            }
            return s.devices.filter { $0.owner == nil }.map(\.host.board)
        }
        server.stop()
        connection.close()
        return boards
    }

    /// The address + 1 on the last octet, wrapping 0xFF to 0x00 without carry, as a stock Nordic
    /// bootloader built without bonds advertises (nRF5 SDK `nrf_dfu_ble.c` `gap_address_change`).
    static func nextAddress(after address: String) -> String {
        var parts = address.uppercased().split(separator: ":").map(String.init)
        guard parts.count == 6, let last = UInt8(parts[5], radix: 16) else { return address }
        parts[5] = Hex.number(last &+ 1, digits: 2, prefix: false)
        return parts.joined(separator: ":")
    }

    static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    // MARK: the lock and the clock

    /// Runs `body` under the lock, then handles the events that fell due meanwhile.
    func locked<T>(_ body: (inout FakeState) throws -> T) throws -> T {
        try state.withLock { s in
            s.setTime(modelledNow)
            defer { drain(&s) }
            return try body(&s)
        }
    }

    /// At time scale 0, device work of this length or more is a timer of the board's own, which does not run.
    static let longestInstantWork: Duration = .seconds(10)

    /// The boards' modelled time: the real time since the fake started over the time scale
    /// (at time scale 0, where device work takes no time, the real time itself, moved on to
    /// the time of each piece of work when it is done).
    var modelledNow: Duration {
        let real = started.duration(to: ContinuousClock.now)
        return options.timeScale > 0 ? real / options.timeScale : real
    }

    private func drain(_ s: inout FakeState) {
        while !s.due.isEmpty {
            let event = s.due.removeFirst()
            handle(event, &s)
        }
    }

    /// Makes `event` happen after `modelled` time (times the time scale). With no real delay
    /// it happens before the lock is released, unless `minimumReal` asks for a real pause
    /// (so that a method reply leaves before the signals that follow it, as with BlueZ).
    func schedule(_ event: FakeEvent, after modelled: Duration, minimumReal: Duration = .zero, _ s: inout FakeState) {
        let real = max(modelled * max(0, options.timeScale), minimumReal)
        guard real > .zero else {
            s.due.append(event)
            return
        }
        Task { [weak self] in
            try? await ContinuousClock().sleep(for: real)
            guard let self else { return }
            try? self.locked { s in
                guard !s.stopped else { return }
                self.handle(event, &s)
            }
        }
    }

    func handle(_ event: FakeEvent, _ s: inout FakeState) {
        switch event {
        case let .work(i, work, due):
            // The board's clock reaches the work's time, even when the work runs at once (time scale 0).
            s.devices[s.boardIndex(i)].host.now = max(s.devices[s.boardIndex(i)].host.now, due)
            let step = s.devices[s.boardIndex(i)].host.perform(work)
            apply(step, device: i, &s)
        case let .deliver(i):
            deliverNotification(i, &s)
        case let .boot(i):
            let b = s.boardIndex(i)
            let step = s.devices[b].host.boot()
            apply(step, device: i, &s)
            save(b, s)
            booted(b, &s)
        case let .resolve(i, epoch):
            resolveServices(i, epoch: epoch, &s)
        case let .advertise(devices):
            for i in devices { advertise(i, &s) }
        case let .pairingSettled(i, stamp):
            pairingSettled(i, stamp: stamp, &s)
        case let .pairingDisconnect(i, stamp):
            pairingDisconnect(i, stamp: stamp, &s)
        case let .pairingReset(i, stamp):
            pairingReset(i, stamp: stamp, &s)
        }
    }

    func note(_ text: String) { options.onNote(text) }

    func save(_ i: Int, _ s: FakeState) {
        let b = s.boardIndex(i)
        guard let url = s.devices[b].spec.stateFile else { return }
        do {
            try s.devices[b].host.board.save(to: url)
        } catch {
            note("cannot save board \(s.devices[i].spec.address) to \(url.path): \(error)")
        }
    }

    /// Sends D-Bus signals and object changes; a failure (the bus went away) is only noted.
    func emit(_ what: String, _ body: () throws -> Void) {
        do { try body() } catch { note("cannot emit \(what): \(error)") }
    }

    // MARK: clients leaving the bus

    /// Ends the discovery and notification sessions of clients that leave the bus, as BlueZ does.
    private func watchClients() async throws {
        let rule = DBusMatchRule(
            sender: DBusStandard.bus, path: DBusStandard.busPath, interface: DBusStandard.bus,
            member: "NameOwnerChanged")
        let stream = try await connection.signals(matching: rule)
        let task = Task { [weak self] in
            for await signal in stream {
                guard let name = try? signal.arguments.argument(0).string(),
                    let newOwner = try? signal.arguments.argument(2).string(),
                    name.hasPrefix(":"), newOwner.isEmpty
                else { continue }
                try? self?.locked { s in self?.clientLeft(name, &s) }
            }
        }
        watcher.withLock { $0 = task }
    }
}

extension FakeBlueZError: DomainError {
    /// A malformed address or scenario is the caller's mistake; a bus the fake cannot serve on
    /// leaves its clients with no board.
    public var failureKind: FailureKind {
        switch self {
        case .invalidAddress, .duplicateAddress: return .invalidRequest
        case .badScenario: return .badFirmware
        case .bus: return .boardUnavailable
        }
    }
}
