import Flashing
import McuMgr

/// How a benchmark run flashes: the session's automatic choice, or a forced full update in
/// one of two McuMgr configurations.
public enum BenchStrategy: String, Sendable, Codable, CaseIterable {
    /// `--mode auto`: partial flashing when the runtime matches, a full update otherwise.
    case auto
    /// A forced full update as the reference mobile library does it by default: one request
    /// in flight, every frame in one write (`pipelineDepth = 1`, `useReassembly = false`).
    case fullReference = "full-reference"
    /// A forced full update as bitflash does it: pipelined uploads of reassembled frames.
    case fullBest = "full-best"
    /// Forced partial flashing (`--mode partial`): what auto's choice is measured against when it
    /// took a full update although partial flashing was possible.
    case partialOnly = "partial"
    /// A forced full update of a stock board through its Nordic bootloader (Secure DFU on
    /// nRF52833, legacy DFU on nRF51), with the default receipts and post-Create delay.
    case nordic = "full-nordic"

    /// Column heading.
    public var title: String {
        switch self {
        case .auto: return "auto"
        case .fullReference: return "full (reference)"
        case .fullBest: return "full (bitflash)"
        case .partialOnly: return "partial (forced)"
        case .nordic: return "full (Nordic DFU)"
        }
    }

    /// The session options of this strategy. Both full configurations reconnect as soon as the
    /// board advertises again after the reset (`estimatedSwapTime = 0`: the simulated adapter's
    /// connection attempt waits for the board, as BlueZ does), so neither waits on a guess.
    public var options: FlashOptions {
        var options = FlashOptions(mode: self == .auto ? .auto : (self == .partialOnly ? .partial : .full))
        switch self {
        case .auto, .fullBest, .partialOnly:
            options.mcumgr.pipelineDepth = nil
            options.mcumgr.useReassembly = true
        case .fullReference:
            options.mcumgr.pipelineDepth = 1
            options.mcumgr.useReassembly = false
        case .nordic:
            options.fullPath = .nordic
        }
        options.mcumgr.estimatedSwapTime = .zero
        options.mcumgr.traceBytes = 0
        return options
    }
}
