import FirmwareImage
import Flashing
import LinkModel
import PartialFlashingFrames
import SimulatedBoard
import SimulatedFlashing
import Synchronization
import Transport

/// One simulated board of a flash: the plan it gets, its id in the simulation, its name.
public typealias SimulatedEntry = (plan: FlashPlan, board: BoardID, name: String)

/// Simulated boards, by the same policy as real ones: the file planned for the boards' kind, each
/// board's resume record, the class forecast from each board's own decision, the records kept.
///
/// A program that saves its boards between runs (the command line's state folder) keeps a
/// board's records only once the board itself is saved (`keepRecords`), so that a record never
/// claims more than the board's saved flash holds, whenever the program is stopped.
extension Flasher {
    /// `plan` for the simulated board `name`, with its resume record (`ResumeRecords`).
    public func resumed(_ plan: FlashPlan, board name: String, warn: (String) -> Void) -> FlashPlan {
        guard case let .simulated(store?) = backend else { return plan }
        return ResumeRecords(store: store, startOver: startOver).plan(plan, board: name, warn: warn)
    }

    /// What each board is expected to do, as its session will decide: a dry run of every board on
    /// a copy of the simulation (their memory maps read, their decisions made, nothing written).
    public func expected(_ boards: [SimulatedEntry], in sim: Simulation) throws -> [ExpectedBoard] {
        var copy = sim
        var dry = options
        dry.dryRun = true
        let runs = SimulatedFlash.runAll(boards, options: dry, in: &copy)
        return try zip(boards, runs).map { entry, run in
            let runsProgram = try sim.board(entry.board).mode == .application
            guard case let .success(outcome) = run.outcome else {
                return ExpectedBoard(path: .partial, runsProgram: runsProgram)
            }
            return Self.expected(outcome, runsProgram: runsProgram)
        }
    }

    /// The class's forecast for several simulated boards sharing the simulation's adapters, each
    /// within its connection limit, each by its own expected path (`expected`); nil for one board.
    public func forecast(_ plan: FlashPlan, boards: [SimulatedEntry], in sim: Simulation) throws -> ClassForecast? {
        guard boards.count > 1 else { return nil }
        return ClassForecast.make(
            plan: plan, options: options, boards: try expected(boards, in: sim), link: sim.link,
            adapters: sim.adapters.indices.map {
                .init(
                    name: Self.adapterName(sim, $0), connectionLimit: AdapterProfile.limit(sim.connectionLimit(of: $0)))
            })
    }

    /// How a simulated adapter is named: `hci1 (fast-dongle)`.
    public static func adapterName(_ sim: Simulation, _ index: Int) -> String {
        "hci\(index) (\(sim.adapters[index].name))"
    }

    /// Flashes the boards together (or plans them, for a dry run), on virtual time until
    /// `deadline`. Returns each board's run and its latest checkpoint (nil inside: nothing left
    /// unfinished; absent: none reported), which `keepRecords` keeps once the board is saved.
    public func flash(
        _ boards: [SimulatedEntry], in sim: inout Simulation, deadline: Duration = SimulatedFlash.defaultDeadline,
        onEvent: (@Sendable (FlashEvent) -> Void)? = nil
    ) -> (runs: [SimulatedFlashRun], checkpoints: [String: ResumePoint?]) {
        let checkpoints = Mutex<[String: ResumePoint?]>([:])
        let runs = SimulatedFlash.runAll(
            boards, options: options, in: &sim, deadline: deadline,
            onEvent: { event in
                if case let .checkpoint(point) = event.report {
                    checkpoints.withLock { $0[event.board] = point?.resumePoint }
                }
                onEvent?(event)
            })
        return (runs, checkpoints.withLock { $0 })
    }

    /// The records of board `name` after its flash, once the board is saved: its latest
    /// checkpoint, its finish record, and its resume record forgotten when it was read back
    /// running its program (`ResumeRecords.finish`). A record that cannot be kept is a warning.
    public func keepRecords(
        of name: String, checkpoint: ResumePoint??, result: FlashResult, session: Result<SessionOutcome, any Error>,
        warn: (String) -> Void
    ) {
        guard case let .simulated(store?) = backend, !options.dryRun else { return }
        let records = ResumeRecords(store: store, startOver: startOver)
        if let checkpoint {
            do { try records.keep(checkpoint, board: name) } catch { warn("\(error)") }
        }
        records.finish(result, session: session, board: name, warn: warn)
    }
}

extension Flasher {
    /// Flashes `firmware` onto one simulated board by the policy: planned for the board's kind
    /// (a file a real board's flash refuses is refused here, in the same words, before anything
    /// is sent), continued from its resume record, its records kept after the flash.
    /// - Throws: `FlashRefusal`.
    public func flash(
        _ firmware: Firmware, onSimulated board: BoardID, named name: String, in sim: inout Simulation,
        warn: (String) -> Void = { _ in }, onEvent: (@Sendable (FlashEvent) -> Void)? = nil
    ) throws -> SimulatedFlashRun {
        let kind = try sim.board(board).profile.board
        let planned = try plan(firmware, for: kind, described: "simulated \(kind.displayName)", warn: warn)
        let (runs, checkpoints) = flash(
            [(resumed(planned, board: name, warn: warn), board, name)], in: &sim, onEvent: onEvent)
        keepRecords(
            of: name, checkpoint: checkpoints[name], result: runs[0].result, session: runs[0].outcome, warn: warn)
        return runs[0]
    }
}
