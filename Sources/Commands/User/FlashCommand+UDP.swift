import ArgumentParser
import Diagnostics
import FirmwareImage
import Flasher
import Flashing
import Laboratory
import Foundation
import UDPTransport

/// `bitflash flash FILE --udp HOST:PORT`: a full McuMgr update over SMP/UDP, reported like
/// every other flash (the same progress lines, JSON events and result object).
extension FlashCommand {
    func validateUDP() throws {
        guard let udp else { return }
        if !devices.isEmpty || simulate != nil {
            throw ValidationError("--udp talks to one SMP server: leave out --device and --simulate")
        }
        if boards != 1 { throw ValidationError("--udp flashes one board: leave out --boards") }
        if mode == .partial { throw ValidationError("--udp only does full updates (McuMgr): leave out --mode partial") }
        do { _ = try UDPEndpoint(parsing: udp) } catch { throw ValidationError("--udp \(error)") }
    }

    /// Runs the update; the board family is the default profile's unless `--board` names one.
    func runOverUDP(_ text: String) async throws -> ExitStatus {
        let endpoint: UDPEndpoint
        do { endpoint = try UDPEndpoint(parsing: text) } catch { throw CLIError(.usage, "--udp \(error)") }
        let firmware = try FirmwareFileLoading.loadForFlash(file)
        let name = "udp:\(endpoint)"
        let out = SharedOutput(Output.make(output.mode, boards: [name], verbosity: output.verbose))
        let result: FlashResult
        do {
            result = try await flasher(.udp(endpoint))
                .flashOverUDP(firmware, kind: SimProfile.default.board, onEvent: { out.event($0) })
                .withUDPServerHint("\(endpoint)")
        } catch FlasherError.noFullImage {
            throw CLIError(
                .badFirmware,
                "\(file): no MCUboot image can be made from it for a full update; pass one with --dfu-image")
        }
        out.result(result)
        out.finish([result])
        return finishFlash([result])
    }
}
