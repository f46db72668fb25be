import BlueZFlashing
import Diagnostics
import FirmwareImage
import Flashing
import Foundation
import McuMgr
import PartialFlashing
import SMP
import Transport
import PartialFlashingFrames

/// `bitflash info --device ADDR|NAME`: the same report as `info --simulate`, read from a real
/// board over BlueZ (`BlueZBoard`). Nothing is written and the board's mode is left as it is.
extension InfoCommand {
    func runOnDevice(_ query: String) async throws -> ExitStatus {
        let board = try await BlueZBoard.connect(query, settings: bluetooth.settings)
        do {
            let shown = try await read(board)
            await board.close()
            if json {
                StdOut.write(try JSONText.document(shown) + "\n")
            } else {
                StdOut.write(Self.text(shown))
            }
            return .ok
        } catch let error as CLIError {
            let hint = board.failureHint
            await board.close()
            throw hint.map { CLIError(error.exitStatus, "\(error.message); \($0)") } ?? error
        } catch {
            await board.close()
            throw error
        }
    }

    private func read(_ board: BlueZBoard) async throws -> Shown {
        let name = board.device.shortName ?? board.device.address
        let trace: @Sendable (FlowReport, Duration) -> Void = { report, _ in
            if case let .trace(text) = report.worded { Verbose.log.debug("\(name): \(text)") }
        }
        guard board.connection.services.contains(PartialFlashingGATT.service) else {
            throw CLIError(
                .flashFailed,
                "\(board.device.label) offers no partial-flashing service, so its memory map "
                    + "cannot be read; is it running a MakeCode program (or in pairing mode)?")
        }
        let map: BoardMemoryMap
        do { map = try await board.memoryMap(onReport: trace) } catch {
            throw CLIError(.flashFailed, "\(name): could not read the memory map: \(describe(error))")
        }
        let family = DetectedBoard.family(of: map)
        var slots: [ImageSlotState]?
        if board.connection.services.contains(SMPGATT.service) {
            do {
                slots = try await board.run(
                    ImageStateReader(traceBytes: verbose > 1 ? 256 : (verbose > 0 ? 32 : 0)), onReport: trace)
            } catch {
                throw CLIError(.flashFailed, "\(name): could not read the image slots: \(describe(error))")
            }
        }
        return Self.shown(
            name: name, board: DetectedBoard.guess(family: family, name: board.device.name),
            address: board.device.address, map: map, slots: slots, simulatorState: nil)
    }
}
