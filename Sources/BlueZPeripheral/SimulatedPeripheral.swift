import DBus
import Diagnostics
import Foundation
import LinkModel
import SimulatedBoard
import Synchronization
import Transport

/// Where and how a simulated board is served.
public struct PeripheralOptions: Sendable {
    /// The adapter that plays the board (`hci1`).
    public var adapterName = "hci1"
    /// The advertised name.
    public var name = "BBC micro:bit [sim]"
    /// Where the GATT application and the advertisement are exported.
    public var applicationPath = "/org/bitflash/peripheral"
    /// Real seconds per modelled second of device work and reboots; 0 does them at once.
    public var timeScale: Double = 1
    /// Offer BlueZ `AcquireWrite`/`AcquireNotify` (writes and notifications through sockets);
    /// false: every write is a `WriteValue` call, every notification a `PropertiesChanged`.
    public var acquireSockets = true
    /// Receives the board's trace lines and the peripheral's own notes.
    public var onNote: @Sendable (String) -> Void = { _ in }
    /// Called with the board whenever the link drops or the board boots (to save it).
    public var onBoardChanged: @Sendable (SimulatedBoard) -> Void = { _ in }

    public init() {}

    var advertisementPath: String { applicationPath + "/advertisement0" }
    var adapterPath: String { BlueZServerNames.rootPath + "/" + adapterName }
}

/// What went wrong serving the board through BlueZ.
public enum PeripheralError: Error, CustomStringConvertible {
    case bluetoothUnavailable(DBusError)
    case noAdapter(String, available: [String])
    case registration(String, DBusError)

    public var description: String {
        switch self {
        case .bluetoothUnavailable(let e):
            return
                "Bluetooth is not available (\(e)): start bluetoothd (`sudo systemctl start bluetooth`) and run as a user "
                + "allowed to use it"
        case let .noAdapter(name, available):
            return "no adapter \(name): "
                + (available.isEmpty
                    ? "BlueZ sees none (plug one in, or check `bluetoothctl list`)"
                    : "pick one of \(available.joined(separator: ", "))")
        case let .registration(what, e):
            return
                "BlueZ refused \(what): \(e) (is bluetoothd 5.50 or newer, with the adapter switched on and LE enabled?)"
        }
    }
}

/// Counters of what the peripheral saw, for the final report.
public struct PeripheralCounters: Sendable {
    public var writes = 0
    /// Of the writes, those that came through a socket of `AcquireWrite`.
    public var socketWrites = 0
    /// Of the notifications, those sent through a socket of `AcquireNotify`.
    public var socketNotifications = 0
    /// Sockets handed to BlueZ.
    public var acquiredWrites = 0
    public var acquiredNotifies = 0
    public var droppedWrites = 0
    public var notifications = 0
    public var resets = 0
    public var links = 0
    /// The largest ATT MTU BlueZ reported with a write.
    public var mtu: Int?
}

/// A simulated board in the peripheral role on a real BlueZ: its GATT services registered
/// with `GattManager1.RegisterApplication` and advertised with
/// `LEAdvertisingManager1.RegisterAdvertisement` on one adapter, so that a central (another
/// adapter, another computer) can scan for it, connect and flash it. Writes go to the board in
/// real time (`GATTBoardHost`); its notifications are `PropertiesChanged(Value)`, which
/// bluetoothd sends to the subscribed central; a board reset disconnects the central and stops
/// advertising until the board has booted. A stock board that resets into its Nordic
/// bootloader (or back) comes up with another GATT table and name: the peripheral then
/// registers the bootloader's application ("DfuTarg", FE59 or 1530) in place of the
/// application's, as the board's own stack would after the reset.
///
/// ```swift
/// let peripheral = try await SimulatedPeripheral.start(board: board, options: options)
/// // … a central flashes the board …
/// let board = await peripheral.stop()
/// ```
public final class SimulatedPeripheral: Sendable {
    public let connection: DBusConnection
    let options: PeripheralOptions
    let server: DBusObjectServer
    let advertisementServer: DBusObjectServer
    let state: Mutex<PeripheralState>
    let started = ContinuousClock.now
    /// BlueZ calls made on the board's behalf (disconnect, advertising), one at a time, in order.
    let requests: AsyncStream<@Sendable () async -> Void>.Continuation
    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// Connects to `bus`, exports the application and the advertisement, and registers both
    /// with BlueZ on the adapter.
    /// - Throws: `PeripheralError`.
    public static func start(
        bus: DBusBusAddress = .system, board: SimulatedBoard,
        options: PeripheralOptions = PeripheralOptions()
    ) async throws -> SimulatedPeripheral {
        let connection: DBusConnection
        do { connection = try DBusConnection(bus: bus) } catch let e as DBusError {
            throw PeripheralError.bluetoothUnavailable(e)
        }
        let peripheral: SimulatedPeripheral
        do {
            peripheral = try SimulatedPeripheral(connection: connection, board: board, options: options)
        } catch let e as DBusError {
            connection.close()
            throw PeripheralError.registration("the GATT application's objects", e)
        }
        do {
            try await peripheral.checkAdapter()
            try await peripheral.watchLinks()
            try await peripheral.register()
        } catch {
            await peripheral.close()
            throw error
        }
        return peripheral
    }

    private init(connection: DBusConnection, board: SimulatedBoard, options: PeripheralOptions) throws {
        self.connection = connection
        self.options = options
        let application = PeripheralGATTApplication(
            board: board, rootPath: options.applicationPath, acquire: options.acquireSockets)
        state = Mutex(PeripheralState(host: GATTBoardHost(board: board), application: application))
        server = try DBusObjectServer(
            connection: connection, rootPath: options.applicationPath, listsStandardInterfaces: false)
        advertisementServer = try DBusObjectServer(
            connection: connection, rootPath: options.advertisementPath,
            listsStandardInterfaces: false)
        let (stream, continuation) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        requests = continuation
        let worker = Task { for await request in stream { await request() } }
        tasks.withLock { $0.append(worker) }
        try exportObjects()
    }

    /// The board as it stands now.
    public var board: SimulatedBoard { state.withLock { $0.host.board } }

    /// The GATT application registered for the board's current mode.
    public var application: PeripheralGATTApplication { state.withLock { $0.application } }

    /// The name the board advertises now: "DfuTarg" while its Nordic bootloader runs.
    var advertisedName: String {
        state.withLock { $0.host.board.inNordicBootloader ? $0.host.board.advertisedName : options.name }
    }

    public var counters: PeripheralCounters { state.withLock { $0.counters } }

    /// The adapter's Bluetooth address, as BlueZ reports it (the board's address for centrals).
    public var adapterAddress: String? { state.withLock { $0.adapterAddress } }

    /// Unregisters from BlueZ, completes a reset in progress and closes the connection.
    /// Returns the board as it stands.
    public func stop() async -> SimulatedBoard {
        let board = state.withLock { s -> SimulatedBoard in
            s.stopped = true
            if s.host.isDown { _ = s.host.boot() }
            return s.host.board
        }
        let adapter = options.adapterPath
        _ = try? await connection.call(
            destination: BlueZServerNames.busName, path: adapter, interface: BlueZServerNames.advertisingManager,
            method: "UnregisterAdvertisement", arguments: [.objectPath(options.advertisementPath)], timeout: .seconds(3)
        )
        _ = try? await connection.call(
            destination: BlueZServerNames.busName, path: adapter, interface: BlueZServerNames.gattManager,
            method: "UnregisterApplication", arguments: [.objectPath(options.applicationPath)], timeout: .seconds(3))
        await close()
        return board
    }

    private func close() async {
        state.withLock { s in
            for socket in s.writeSockets.values { socket.close() }
            for socket in s.notifySockets.values { socket.close() }
            s.writeSockets = [:]
            s.notifySockets = [:]
        }
        requests.finish()
        tasks.withLock { for t in $0 { t.cancel() } }
        server.stop()
        advertisementServer.stop()
        connection.close()
    }

    func note(_ text: String) { options.onNote(text) }

    // MARK: the lock and the clock

    /// Runs `body` under the lock, then handles the events that fell due meanwhile.
    func locked<T>(_ body: (inout PeripheralState) throws -> T) rethrows -> T {
        try state.withLock { s in
            // The board's modelled time: real time over the time scale (real time at scale 0).
            let real = started.duration(to: ContinuousClock.now)
            s.host.now = max(s.host.now, options.timeScale > 0 ? real / options.timeScale : real)
            defer {
                while !s.due.isEmpty { handle(s.due.removeFirst(), &s) }
            }
            return try body(&s)
        }
    }

    /// Makes `event` happen after `modelled` time times the time scale.
    func schedule(_ event: PeripheralEvent, after modelled: Duration, _ s: inout PeripheralState) {
        let real = modelled * max(0, options.timeScale)
        guard real > .zero else {
            s.due.append(event)
            return
        }
        Task { [weak self] in
            try? await ContinuousClock().sleep(for: real)
            guard let self else { return }
            self.locked { s in
                guard !s.stopped else { return }
                self.handle(event, &s)
            }
        }
    }

    /// Queues a BlueZ call; calls run one at a time in the order queued.
    func request(_ body: @escaping @Sendable () async -> Void) {
        requests.yield(body)
    }
}

/// Something the board does later.
enum PeripheralEvent: Sendable {
    case work(GATTBoardHost.Work, due: Duration)
    case boot
}

/// Everything that changes, under one lock.
struct PeripheralState: Sendable {
    var host: GATTBoardHost
    /// The GATT application exported (and registered) for the board's mode.
    var application: PeripheralGATTApplication
    /// The central's device object on the peripheral's adapter, from BlueZ's write options.
    var central: String?
    var notifying: Set<String> = []
    /// The sockets handed to BlueZ, by characteristic path (bluetoothd keeps them across links
    /// until one side closes; B566 `src/gatt-database.c` `sock_hup()`).
    var writeSockets: [String: PacketSocket] = [:]
    var notifySockets: [String: PacketSocket] = [:]
    var adapterAddress: String?
    var counters = PeripheralCounters()
    var stopped = false
    var due: [PeripheralEvent] = []
}

extension PeripheralError: DomainError {
    public var failureKind: FailureKind {
        switch self {
        case .noAdapter: return .boardUnavailable
        case .bluetoothUnavailable, .registration: return .bluetoothUnavailable
        }
    }
}
