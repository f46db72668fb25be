import FirmwareImage
import LinkModel

/// What one board of a class is expected to do, read before the class starts as its session
/// will decide it: the path it will take (nil when it already holds the file), and whether it
/// runs its program (a partial flash then restarts it in pairing mode first).
public struct ExpectedBoard: Sendable, Equatable {
    /// The path the board's session will take; nil for a board found up to date.
    public var path: EstimatedPath?
    /// The board runs its program (application mode), not pairing mode.
    public var runsProgram: Bool

    public init(path: EstimatedPath?, runsProgram: Bool) {
        self.path = path
        self.runsProgram = runsProgram
    }
}

extension ClassEstimator {
    /// What a board expected to be `board` asks of the radio, from a board not yet connected;
    /// nil when the plan cannot take its path. A board up to date costs its connection and the
    /// memory-map read that finds it so.
    public static func demand(
        plan: FlashPlan, expected board: ExpectedBoard, options: FlashOptions, link: LinkEstimate
    ) -> RadioDemand? {
        guard let path = board.path else {
            // An up-to-date board: the connection and the read before the decision, nothing else.
            guard var partial = demand(plan: plan, path: .partial, options: options, link: link, runsProgram: false)
            else { return nil }
            let before = EstimateContext(
                link: link, board: BoardCosts(family: plan.family), includesMemoryMapRead: true
            ).beforeDecision.name
            partial.parts = partial.parts.filter { $0.name == before }
            partial.connects(
                before, as: board.runsProgram ? .application : .pairing, after: .zero,
                setup: link.profile.connectionSetup)
            return partial
        }
        return demand(plan: plan, path: path, options: options, link: link, runsProgram: board.runsProgram)
    }

    /// The class of `boards`, each by its own expected path (a mixed class when they differ):
    /// nil when a board's path cannot be estimated.
    public static func estimate(
        plan: FlashPlan, boards: [ExpectedBoard], options: FlashOptions, link: LinkEstimate, adapters: [Adapter]
    ) -> (estimate: ClassEstimate, demands: [RadioDemand])? {
        estimate(boards: boards.map { (plan, $0) }, options: options, link: link, adapters: adapters)
    }

    /// The class of `boards`, each with the plan for its own kind of board (a V1 and a V2 take
    /// different parts of a universal hex, at different flash speeds) and its own expected path:
    /// nil when a board's path cannot be estimated.
    public static func estimate(
        boards: [(plan: FlashPlan, expected: ExpectedBoard)], options: FlashOptions, link: LinkEstimate,
        adapters: [Adapter]
    ) -> (estimate: ClassEstimate, demands: [RadioDemand])? {
        var demands: [RadioDemand] = []
        for board in boards {
            guard let d = demand(plan: board.plan, expected: board.expected, options: options, link: link) else {
                return nil
            }
            demands.append(d)
        }
        return (estimate(demands, adapters: adapters), demands)
    }
}
