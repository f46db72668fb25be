import FirmwareImage
import Flashing
import LinkModel
import SimulatedBoard
import Transport

/// One session on a simulated board: the result users see, and what the simulation measured.
public struct SimulatedFlashRun: Sendable {
    /// What the user sees: path, reason, bytes, modelled seconds, verified, error.
    public var result: FlashResult
    /// The session's own outcome, or the error that ended it.
    public var outcome: Result<SessionOutcome, any Error>
    /// What the whole run cost on the modelled link (shared by all boards of a `runAll`).
    public var statistics: RunStatistics
    /// Every write, notification, connection event and decision of the run (all boards of a `runAll`).
    public var trace: Trace
    /// The adapter the board was flashed through (an index into `Simulation.adapters`).
    public var adapter: Int = 0
}

/// Flashes simulated boards with the same `SessionFlow` a real board gets, on virtual time.
public enum SimulatedFlash {
    /// The modelled-time limit of one session: generous, so that only a hung flow reaches it.
    public static let defaultDeadline: Duration = .seconds(900)

    /// Flashes one board of `simulation`. `onEvent` receives every report with modelled time.
    public static func run(
        plan: FlashPlan, options: FlashOptions = FlashOptions(), on board: BoardID,
        named name: String, in simulation: inout Simulation,
        deadline: Duration = defaultDeadline,
        onEvent: (@Sendable (FlashEvent) -> Void)? = nil
    ) -> SimulatedFlashRun {
        runAll([(plan, board, name)], options: options, in: &simulation, deadline: deadline, onEvent: onEvent)[0]
    }

    /// Flashes `firmware` onto one board of `simulation` by the library's policy: the file is
    /// planned for the board's kind (`FlashPolicy`), so a file a real board's flash refuses is
    /// refused here, in the same words, before anything is sent.
    /// - Throws: `FlashRefusal`.
    public static func flash(
        _ firmware: Firmware, settings: PlanSettings = PlanSettings(), options: FlashOptions = FlashOptions(),
        on board: BoardID, named name: String, in simulation: inout Simulation,
        warn: (String) -> Void = { _ in }, onEvent: (@Sendable (FlashEvent) -> Void)? = nil
    ) throws -> SimulatedFlashRun {
        let kind = try simulation.board(board).profile.board
        let plan = try FlashPolicy.plan(
            firmware, for: kind, described: "simulated \(kind.displayName)", settings: settings, warn: warn)
        return run(plan: plan, options: options, on: board, named: name, in: &simulation, onEvent: onEvent)
    }

    /// Flashes several boards; the boards on one adapter share its radio. Each adapter holds at
    /// most its profile's connections: the others wait, and each starts when a board finishes,
    /// on the adapter that freed up (`Simulation.placesWithinLimits`).
    public static func runAll(
        _ boards: [(plan: FlashPlan, board: BoardID, name: String)], options: FlashOptions = FlashOptions(),
        in simulation: inout Simulation, deadline: Duration = defaultDeadline,
        onEvent: (@Sendable (FlashEvent) -> Void)? = nil
    ) -> [SimulatedFlashRun] {
        let names = Dictionary(uniqueKeysWithValues: boards.map { ($0.board, $0.name) })
        let previous = simulation.onReport
        if let onEvent {
            let meter = ProgressRateMeter()
            simulation.onReport = { id, report, t in
                onEvent(meter.event(board: names[id] ?? "\(id)", elapsed: t, report: report))
            }
        }
        defer { simulation.onReport = previous }
        if simulation.reportWords == nil { simulation.reportWords = { FlowWords.text(of: $0) } }
        let flows = boards.map { FlowOnBoard(SessionFlow(plan: $0.plan, options: options), on: $0.board) }
        let runs = simulation.runAll(flows, deadline: deadline)
        return zip(boards, runs).map { entry, run in
            let outcome: Result<SessionOutcome, any Error> = run.outcome.flatMap { value in
                if let o = value as? SessionOutcome { return .success(o) }
                return .failure(SimulatedBoardError.noOutcome)
            }
            var result = FlashResult(
                board: entry.name, outcome: outcome, seconds: run.modelledTime.seconds,
                progress: (run.machine as? SessionFlow)?.progress)
            // A board that never took the first connection was not reached, as a real board that
            // could not be connected: its result exits as the error says (69), nothing was sent.
            if case let .failure(error) = outcome,
                case SimulatedBoardError.notConnectable? = error as? SimulatedBoardError
            {
                result = FlashResult(board: entry.name, unreached: error, seconds: run.modelledTime.seconds)
            }
            return SimulatedFlashRun(
                result: result, outcome: outcome, statistics: run.statistics, trace: run.trace, adapter: run.adapter)
        }
    }
}

extension TraceResult {
    /// How a board's flash ended, as a trace file's `result` line records it.
    public init(_ r: FlashResult) {
        self.init(path: r.path?.rawValue, code: r.reason.code, error: r.error)
    }
}
