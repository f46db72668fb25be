import BlueZPeripheral
import Flashing
import Foundation
import Laboratory
import SimulatedBoard
import UDPTransport

/// Where the command line words what the library says neutrally: the library names its options
/// and leaves out commands; the command line names its flags and the command that helps.

extension OptionNames {
    /// The flags of `bitflash flash`.
    static let commandLine = OptionNames(mode: "--mode ", fullPath: "--full-path ", fullImage: "--dfu-image FILE")
}

/// A library error the command line words its own way: the library's message with the
/// command or flag that fixes the problem. `describe(_:)` uses it.
protocol CommandLineHinted: Error {
    var commandLineDescription: String { get }
}

extension SimStoreError: CommandLineHinted {
    var commandLineDescription: String {
        switch self {
        case .unreadable: return "\(self); run `bitflash sim reset` to start this board afresh"
        case let .otherProfile(_, _, saved, wanted):
            return "\(self): run `bitflash sim reset --profile \(wanted)` first, or use --simulate \(saved)"
        case .cannotSave, .noApplication: return description
        case .notABoard: return "\(self) (--sim-state DIR)"
        }
    }
}

extension TraceFileError: CommandLineHinted {
    var commandLineDescription: String {
        guard case let .notATraceLine(path, _) = self else { return description }
        return
            "\(self); record one with `bitflash-lab flash FILE --simulate --trace \((path as NSString).lastPathComponent)`"
    }
}

extension PeripheralError: CommandLineHinted {
    var commandLineDescription: String {
        guard case let .noAdapter(_, available) = self, !available.isEmpty else { return description }
        return "\(self) with --adapter"
    }
}

extension FlashResult {
    /// A flash over UDP that found no server on this computer: how to start a simulated one to try.
    func withUDPServerHint(_ endpoint: String) -> FlashResult {
        guard failureKind == .boardUnavailable, let error, let e = try? UDPEndpoint(parsing: endpoint),
            e.host == "localhost" || e.host == "::1" || e.host.hasPrefix("127.")
        else { return self }
        var r = self
        r.error = error + "; to try a simulated board, start one with `bitflash-lab sim serve --udp \(endpoint)`"
        return r
    }
}
