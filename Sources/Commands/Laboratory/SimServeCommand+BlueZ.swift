import BlueZPeripheral
import Foundation
import Laboratory
import SimulatedBoard
import Transport
import NordicDFUFrames
import PartialFlashingFrames
import SMP

/// `bitflash-lab sim serve --adapter hciN`: the simulated board as a BLE peripheral on the real BlueZ.
extension SimServeCommand {
    func runPeripheral(adapter: String) async throws {
        try await runCommand {
            let store = SimStore(option: stateFolder.simState)
            // Held while the board serves: a flash meanwhile would be lost when the board is saved.
            let lock = try StateFolderLock.hold(store.directory, waitSeconds: stateFolder.stateWait)
            defer { withExtendedLifetime(lock) {} }
            let state = SimStore.names(count: 1)[0]
            let board = try SimBlueZCommand.board(
                store: store, state: state, index: 1, profile: profileOption, from: from)
            do {
                try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
                try store.save(board, as: state)
            } catch {
                throw CLIError(.cannotWrite, "cannot save the board in \(store.directory.path): \(error)")
            }
            let verbose = self.verbose
            var options = PeripheralOptions()
            options.adapterName = adapter
            options.name = name ?? SimBlueZCommand.advertisedName(board)
            options.timeScale = timeScale
            options.acquireSockets = !noAcquire
            options.onNote = { line in if verbose { StdOut.write("  \(line)\n") } }
            options.onBoardChanged = { board in try? store.save(board, as: state) }
            // A PeripheralError says whether the adapter is missing (69) or Bluetooth unavailable (75).
            let peripheral = try await SimulatedPeripheral.start(board: board, options: options)
            let profile = SimProfile(board: board.profile.board, mcuboot: board.profile.services.contains(.smp))
            let services = peripheral.application.services.map { service -> String in
                switch service.uuid {
                case PartialFlashingGATT.service: return "partial flashing"
                case SMPGATT.service: return "SMP"
                case NordicGATT.secureService: return "Secure DFU"
                case NordicGATT.dfuControlService: return "DFU control"
                case NordicGATT.legacyService: return "legacy DFU"
                default: return service.uuid.uuidString
                }
            }
            let shown = board.inNordicBootloader ? board.advertisedName : options.name
            StdOut.write(
                "board \(state) ready on \(adapter) (\(peripheral.adapterAddress ?? "address unknown")): advertising "
                    + "\"\(shown)\", \(profile), services \(services.joined(separator: " + ")), state \(store.directory.path)\n"
            )
            await Self.waitForStop(seconds: duration)
            let final = await peripheral.stop()
            try store.save(final, as: state)
            let c = peripheral.counters
            StdOut.write(
                "stopped: \(c.links) link\(c.links == 1 ? "" : "s"), \(c.writes) writes (\(c.droppedWrites) dropped while resetting, "
                    + "\(c.socketWrites) through AcquireWrite sockets), \(c.notifications) notifications (\(c.socketNotifications) through "
                    + "AcquireNotify sockets), \(c.resets) reset\(c.resets == 1 ? "" : "s"), "
                    + "ATT MTU \(c.mtu.map(String.init) ?? "unknown"); board saved\n")
            return .ok
        }
    }
}
