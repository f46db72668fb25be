import FirmwareImage
import LinkModel
import PartialFlashing
import Transport

/// The decision a session makes once the memory map is read, from what it measured.
enum SessionDecision {
    /// The link profile estimates start from when the connection gives no interval:
    /// the one the board asks for.
    static let fallbackProfile = LinkProfile.deviceRequested

    /// Chooses among the partial path (when possible) and the full paths, with the link as
    /// measured on this connection and `now` already spent.
    static func decide(
        partial: PartialEstimator?, full: [any PathEstimator], excluded: [ExcludedPath] = [], options: FlashOptions,
        family: ChipFamily, connection: ConnectionInfo?, meter: IntervalMeter, now: Duration
    ) -> PathDecision? {
        var estimators: [any PathEstimator] = full
        if let partial { estimators.insert(partial, at: 0) }
        let link = LinkEstimate.connection(connection, meter: meter, fallback: fallbackProfile)
        let context = EstimateContext(link: link, board: BoardCosts(family: family), elapsed: now)
        let forced: EstimatedPath? = options.mode == .partial ? .partial : nil
        let prefer = options.mode == .auto ? options.prefer : nil
        var decision = PathDecision.choose(estimators, context: context, forced: forced, prefer: prefer)
        if options.dryRun { decision?.byProfile = PlanEstimates.byProfile(estimators, board: context.board) }
        decision?.excluded = excluded
        return decision
    }

    /// Why a dry run would flash partially: the runtime matches, and what would be sent.
    static func partialReason(_ program: MakeCodeProgram?, blocks: BlockPlan) -> FlashReason {
        let runtime = program.map { " (\($0.runtimeHash.hexString))" } ?? ""
        return FlashReason(
            code: "runtime-matches",
            message:
                "runtime matches\(runtime): \(blocks.blockCount) blocks, \(blocks.pagesOpened) page\(blocks.pagesOpened == 1 ? "" : "s")"
        )
    }
}
