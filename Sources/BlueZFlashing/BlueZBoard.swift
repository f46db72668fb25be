import BlueZTransport
import FirmwareImage
import Flashing
import NordicDFUFrames
import PartialFlashing
import Transport
import PartialFlashingFrames
import SMP

/// One real board, found and connected through BlueZ on a bus connection of its own.
///
/// `BlueZFlasher` uses it for each board it flashes; use it directly to run another flow on a
/// board (read its memory map, its image slots). Close it when done.
///
/// ```swift
/// let board = try await BlueZBoard.connect("zotig")
/// let map = try await board.memoryMap()
/// await board.close()
/// ```
public final class BlueZBoard: Sendable {
    /// The board as BlueZ described it when it was found.
    public let device: BlueZDevice
    /// The live connection's transport.
    public let transport: BlueZDeviceTransport
    /// What the board offered when it connected.
    public let connection: ConnectionInfo
    let operationTimeout: Duration

    init(device: BlueZDevice, transport: BlueZDeviceTransport, connection: ConnectionInfo, operationTimeout: Duration) {
        self.device = device
        self.transport = transport
        self.connection = connection
        self.operationTimeout = operationTimeout
    }

    /// Finds the board `query` names (an address, a whole name, the part in brackets of
    /// `BBC micro:bit [zotig]`, or a unique part of a name) and connects to it.
    /// - Throws: `BlueZError` (not found, ambiguous, Bluetooth unavailable, connect failed,
    ///   services never resolved, pairing refused).
    public static func connect(_ query: String, settings: BlueZFlashSettings = BlueZFlashSettings()) async throws
        -> BlueZBoard
    {
        // A bus or a bluetoothd that does not answer ends the command within its scan time.
        let bus = try await BlueZBus.open(
            bus: settings.bus, serviceTimeout: BlueZBus.serviceTimeout(within: settings.scanTimeout))
        let device: BlueZDevice
        do {
            device = try await BlueZScanner(bus: bus, adapter: settings.adapter)
                .find(DeviceQuery(query), timeout: settings.scanTimeout)
        } catch {
            bus.close()
            throw error
        }
        let transport = try await BlueZDeviceTransport.open(
            device: device, settings: settings.transportSettings, on: bus)
        do {
            let info = try await transport.establish(timeout: settings.connectTimeout)
            return BlueZBoard(
                device: device, transport: transport, connection: info, operationTimeout: settings.operationTimeout)
        } catch {
            transport.close()
            throw error
        }
    }

    /// Runs a flow on the live connection, on the real clock; `onReport` gets its reports
    /// with the time since the flow started.
    /// - Throws: the flow's error, or `CancellationError` when the task is cancelled.
    public func run<M: FlowMachine>(
        _ machine: M,
        onReport: @escaping @Sendable (FlowReport, Duration) -> Void = { _, _ in }
    ) async throws -> M.Output {
        var machine = machine
        return try await run(&machine, onReport: onReport)
    }

    /// Runs a flow as `run(_:onReport:)` does, and leaves it as it ended: on a failure too, the
    /// caller can read what it did before it failed (`SessionFlow.progress`).
    public func run<M: FlowMachine>(
        _ machine: inout M,
        onReport: @escaping @Sendable (FlowReport, Duration) -> Void = { _, _ in }
    ) async throws -> M.Output {
        let driver = AsyncFlowDriver(transport: transport, clock: ContinuousClock(), operationTimeout: operationTimeout)
        return try await driver.run(&machine, connection: connection, onReport: onReport)
    }

    /// Reads the memory map without switching the board's mode.
    public func memoryMap(onReport: @escaping @Sendable (FlowReport, Duration) -> Void = { _, _ in }) async throws
        -> BoardMemoryMap
    {
        var settings = PartialFlashSettings()
        settings.switchToPairingMode = false
        return try await run(MemoryMapReader(settings: settings), onReport: onReport)
    }

    /// What kind of board this is: its chip family from its memory map (partial flashing),
    /// from its McuMgr service (MCUboot boards are nRF52833) or from its Nordic DFU service
    /// (Secure DFU: nRF52833, legacy DFU: nRF51), and the board of that family its name suggests.
    /// - Throws: `BoardFlashError.noFlashingService` when the board offers none of them.
    public func detect(onReport: @escaping @Sendable (FlowReport, Duration) -> Void = { _, _ in }) async throws
        -> DetectedBoard
    {
        let services = connection.services
        let mcumgr = services.contains(SMPGATT.service)
        let nordic = NordicDFUTarget(connection)
        var family: ChipFamily
        if services.contains(PartialFlashingGATT.service) {
            family = nordic.map { $0.isSecure ? .nrf52833 : .nrf51 } ?? .nrf52833
            do {
                family = DetectedBoard.family(of: try await memoryMap(onReport: onReport))
            } catch  where mcumgr || nordic != nil {
                // The session meets the problem again and falls back to the full update.
            }
        } else if mcumgr {
            family = .nrf52833
        } else if let nordic {
            family = nordic.isSecure ? .nrf52833 : .nrf51
        } else {
            throw BoardFlashError.noFlashingService(board: device.label)
        }
        let name = connection.name ?? device.name
        return DetectedBoard(
            board: DetectedBoard.guess(family: family, name: name), address: device.address, name: name,
            inBootloader: nordic?.isBootloader ?? false)
    }

    /// Advice for a flow that failed on this board, from what the transport saw (a stale
    /// bond, impossible notifications), or nil.
    public var failureHint: String? { transport.failureHint }

    /// Disconnects and closes the bus connection.
    public func close() async {
        await transport.disconnect()
        transport.close()
    }
}

/// A board as `BlueZBoard.detect()` found it.
public struct DetectedBoard: Sendable, Equatable {
    /// The board to plan for.
    public var board: Board
    /// The address it was found at.
    public var address: String
    /// Its advertised name, when known.
    public var name: String?
    /// True when it runs its Nordic bootloader ("DfuTarg"), left there by an interrupted update:
    /// its kind is then a guess within its chip family.
    public var inBootloader: Bool

    /// `micro:bit V2 BBC micro:bit [zotig] (F0:0D:…)`: the kind, then the name and address.
    public var description: String {
        "\(board.displayName) \(name.map { "\($0) (\(address))" } ?? address)"
    }

    /// The chip family, from where the runtime region starts (nRF52833 when unknown).
    public static func family(of map: BoardMemoryMap) -> ChipFamily {
        ChipFamily.allCases.first { $0.layout.applicationStart == map.runtime.start } ?? .nrf52833
    }

    /// The board of `family` that `name` suggests: a Calliope mini when the name says so, a
    /// micro:bit otherwise (a bootloader's "DfuTarg" says neither).
    public static func guess(family: ChipFamily, name: String?) -> Board {
        let calliope = (name ?? "").lowercased().contains("calliope")
        switch family {
        case .nrf51: return calliope ? .calliopeMini1 : .microbitV1
        case .nrf52833: return calliope ? .calliopeMini3 : .microbitV2
        }
    }
}
