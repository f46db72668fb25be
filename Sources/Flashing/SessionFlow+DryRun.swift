import PartialFlashing
import Transport

/// The end of a dry run (`FlashOptions.dryRun`): the session stops once the path is decided and
/// nothing was written. Reading the memory map changes nothing on the board (the restart into
/// pairing mode comes only after a decision to write partially), so the board is left as it
/// was found: running its program, or in pairing mode.
extension SessionFlow {
    /// Ends a dry run with the path it would take; nothing was written.
    mutating func finishDryRun(path: FlashPath, reason: FlashReason) -> [FlowAction] {
        var o = SessionOutcome(path: path, reason: reason, fallback: false)
        o.decision = decision
        o.dryRun = true
        o.region = region
        return [Self.report(.dryRunEnded)] + succeed(o)
    }
}
