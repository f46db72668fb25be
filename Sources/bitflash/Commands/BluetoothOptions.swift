import ArgumentParser
import BlueZTransport
import FirmwareImage
import Flashing
import Foundation
import PartialFlashing
import Transport

/// Options of the commands that talk to real boards through BlueZ.
struct BluetoothOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The Bluetooth adapter (default: the first one switched on).", valueName: "hciN"))
    var adapter: String?

    @Option(name: .customLong("scan-timeout"), help: ArgumentHelp("How long to look for a board, in seconds.", valueName: "S"))
    var scanTimeout: Double = 10

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("How long one connect (and the wait for the board's services) may take, in seconds.", valueName: "S"))
    var connectTimeout: Double = 20

    @Flag(name: .customLong("no-pair"), help: "Never pair: fail on a board that asks for a bond.")
    var noPair = false

    func validateTimes() throws {
        guard scanTimeout > 0, scanTimeout <= 600 else { throw ValidationError("--scan-timeout must be between 0 and 600 seconds") }
        guard connectTimeout > 0, connectTimeout <= 600 else { throw ValidationError("--connect-timeout must be between 0 and 600 seconds") }
    }

    var settings: BlueZDeviceTransport.Settings {
        var s = BlueZDeviceTransport.Settings()
        s.servicesResolvedTimeout = .seconds(connectTimeout)
        s.rediscoverTimeout = .seconds(scanTimeout)
        s.pairWhenRequired = !noPair
        return s
    }
}

/// A real board, found and connected.
struct RealBoard {
    let device: BlueZDevice
    let transport: BlueZDeviceTransport
    let connection: ConnectionInfo

    /// Finds the board `query` names and connects to it on a bus connection of its own.
    static func connect(_ query: String, options: BluetoothOptions) async throws -> RealBoard {
        let bus = try await BlueZBus.open()
        let device: BlueZDevice
        do {
            device = try await BlueZScanner(bus: bus, adapter: options.adapter)
                .find(DeviceQuery(query), timeout: .seconds(options.scanTimeout))
        } catch {
            bus.close()
            throw error
        }
        let transport = try await BlueZDeviceTransport.open(device: device, settings: options.settings, on: bus)
        do {
            let info = try await transport.establish(timeout: .seconds(options.connectTimeout))
            return RealBoard(device: device, transport: transport, connection: info)
        } catch {
            transport.close()
            throw error
        }
    }

    /// Runs a flow on the live connection, on the real clock. Without `onReport`, its trace
    /// lines go to the `-v` log.
    func run<M: FlowMachine>(_ machine: M, name: String, onReport: (@Sendable (FlowReport, Duration) -> Void)? = nil) async throws -> M.Output {
        let driver = AsyncFlowDriver(transport: transport, clock: ContinuousClock(), operationTimeout: .seconds(20))
        return try await driver.run(machine, connection: connection) { report, t in
            guard let onReport else {
                if case let .trace(text) = report { Verbose.log.debug("\(name): \(text)") }
                return
            }
            onReport(report, t)
        }
    }

    /// Reads the memory map without switching the board's mode.
    func memoryMap(name: String) async throws -> BoardMemoryMap {
        var settings = PartialFlashSettings()
        settings.switchToPairingMode = false
        return try await run(MemoryMapReader(settings: settings), name: name)
    }

    /// The chip family, from where the runtime region starts (nRF52833 when unknown).
    static func family(of map: BoardMemoryMap) -> ChipFamily {
        ChipFamily.allCases.first { $0.layout.applicationStart == map.runtime.start } ?? .nrf52833
    }

    /// The board, from its chip family (known from the memory map) and its name.
    static func guessBoard(family: ChipFamily, name: String?) -> Board {
        let calliope = (name ?? "").lowercased().contains("calliope")
        switch family {
        case .nrf51: return calliope ? .calliopeMini1 : .microbitV1
        case .nrf52833: return calliope ? .calliopeMini3 : .microbitV2
        }
    }

    func close() async {
        await transport.disconnect()
        transport.close()
    }
}
