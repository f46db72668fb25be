import PartialFlashing
import PartialFlashingFrames
import Transport

/// The end of a dry run (`FlashOptions.dryRun`): the session stops once the path is decided and
/// nothing was written. Reading the memory map of a board that runs its program restarts it in
/// pairing mode (docs/protocols/partial-flashing.md §3.7); a dry run must leave the board as it found
/// it, so it restarts such a board into its program (`FF 01`) and waits for the restart's link
/// drop before it finishes, as an up-to-date flash does.
extension SessionFlow {
    /// How long the restart's link drop is waited for.
    static let dryRunRestartTimeout = Duration.seconds(3)
    static let dryRunRestartTimer = TimerID("session.dry-run-restart")

    /// Ends a dry run with the path it would take; nothing was written.
    mutating func finishDryRun(path: FlashPath, reason: FlashReason) -> [FlowAction] {
        var o = SessionOutcome(path: path, reason: reason, fallback: false)
        o.decision = decision
        o.dryRun = true
        o.region = region
        let nothing = FlowAction.report(.note("dry run: nothing was written"))
        guard boardWasRunningItsProgram, linkUp else { return [nothing] + succeed(o) }
        enter(.dryRunRestarting(o))
        let bytes = PartialFlashingRequest.reset(.application).bytes
        return [nothing, .report(.note("the board was running its program: restarting it into its program")),
                .write(KnownGATT.partialFlashing, bytes, .command),
                .startTimer(Self.dryRunRestartTimer, Self.dryRunRestartTimeout)]
    }

    /// Waiting for the board to drop the link as it restarts into its program.
    mutating func dryRunRestarting(_ event: FlowEvent, outcome: SessionOutcome) -> [FlowAction] {
        switch event {
        case .disconnected:
            return [.cancelTimer(Self.dryRunRestartTimer)] + succeed(outcome)
        case .timerFired(Self.dryRunRestartTimer):
            return [.report(.note("the board did not restart within \(Self.dryRunRestartTimeout); it may still be in pairing mode"))]
                + succeed(outcome)
        default:
            return []
        }
    }
}
