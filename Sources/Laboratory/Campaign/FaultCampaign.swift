import FirmwareImage
import Flashing
import LinkModel
import PartialFlashingFrames
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Synchronization
import Transport

/// A seeded fault campaign: many flashes of simulated boards under injected faults, each
/// checked against `CampaignInvariants`; a failed run is followed by a plain run (no faults)
/// that must repair the board. The same configuration gives the same report.
///
/// ```swift
/// var campaign = FaultCampaign(FaultCampaign.Configuration(runs: 200, seed: 1, paths: [.partial]))
/// let report = campaign.run()
/// print(report.table())   // report.violations is empty when every invariant held
/// ```
public struct FaultCampaign: Sendable {
    /// What a campaign runs.
    public struct Configuration: Sendable, Equatable {
        public var runs: Int
        public var seed: UInt64
        /// Paths taken in turn, run by run.
        public var paths: [CampaignPath]
        public var boards: [Board]
        /// Board kinds allowed on the partial path (the other paths need the McuMgr board). Nil: both.
        public var kinds: [CampaignBoardKind]?
        /// A fixed link profile; nil draws one of the named profiles per run.
        public var link: LinkProfile?
        /// The modelled-time limit of one session.
        public var deadline: Duration
        /// Every board lies this way, or every link suffers this fault that a BLE link cannot have
        /// (duplicated or reordered notifications); the plain run after a failure is on an honest
        /// board and a fault-free link.
        public var hostile: HostileKind?
        /// The index of the first run (runs are numbered from 0, as violations name them), so
        /// that one run of a long campaign can be run again on its own.
        public var firstRun = 0
        /// Record the trace of each run's flash (`FaultCampaign.lastTraces`); off for long campaigns.
        public var recordsTrace = false

        public init(
            runs: Int, seed: UInt64, paths: [CampaignPath] = CampaignPath.allCases,
            boards: [Board] = [.microbitV2, .microbitV1, .calliopeMini3], kinds: [CampaignBoardKind]? = nil,
            link: LinkProfile? = nil, deadline: Duration = SimulatedFlash.defaultDeadline, hostile: HostileKind? = nil
        ) {
            self.runs = runs
            self.seed = seed
            self.paths = paths.isEmpty ? CampaignPath.allCases : paths
            self.boards = boards.isEmpty ? [.microbitV2] : boards
            self.kinds = kinds
            self.link = link
            self.deadline = deadline
            self.hostile = hostile
        }
    }

    public let configuration: Configuration
    private var images: [String: MemoryImage] = [:]
    private var plans: [String: FlashPlan] = [:]
    private var shapes: [String: CampaignShape] = [:]
    /// The traces of the last run, when `Configuration.recordsTrace` is on, in the order they ran:
    /// the run bitflash was killed in (when there was one), the flash under faults, and the plain
    /// run after a failure (the repair), each named after its part.
    public var lastTraces: [(part: String, trace: Trace)] { traceKeeper.parts }
    /// The parts' traces, kept while a run goes on (the killed and repair runs are not mutating).
    private let traceKeeper = TraceKeeper()

    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// The options of every campaign session: the CLI's, with the modelled swap time of a simulated board.
    public static func options(_ path: CampaignPath) -> FlashOptions {
        var o = FlashOptions(mode: path.mode)
        o.mcumgr.estimatedSwapTime = .seconds(2)
        return o
    }

    /// Runs the whole campaign. `progress` is called after each run with the report so far
    /// (its `runs` and `violations` count what is done).
    public mutating func run(progress: ((CampaignReport) -> Void)? = nil) -> CampaignReport {
        var report = CampaignReport(configuration: configuration)
        for i in configuration.firstRun..<(configuration.firstRun + configuration.runs) {
            let drawn = CampaignScenario.draw(
                seed: configuration.seed, index: i, paths: configuration.paths,
                boards: configuration.boards, link: configuration.link, kinds: configuration.kinds)
            let scenario = drawn.withFaults(shape: shape(of: drawn)).withHostileLink(configuration.hostile)
            report.add(runOne(scenario))
            progress?(report)
        }
        return report
    }

    /// Runs one scenario: the flash under faults, the checks, and the repair run after a failure.
    public mutating func runOne(_ scenario: CampaignScenario) -> CampaignRecord {
        traceKeeper.clear()
        var record = CampaignRecord(scenario: scenario)
        var plan: FlashPlan
        var board: SimulatedBoard
        do {
            plan = try self.plan(scenario.board, scenario.target)
            board = try makeBoard(scenario)
            if let hostile = configuration.hostile { board.makeHostile(hostile) }
        } catch {
            record.violate("setup", "the scenario could not be built: \(error)")
            return record
        }
        let declared = CampaignInvariants.declaredProgramRegion(of: board)
        let options = Self.options(scenario.path)
        if let kill = scenario.killAt {
            // bitflash is killed mid-run: the board keeps what it got, the next run starts from there
            // with what the killed one saved.
            guard
                let stopped = killedRun(
                    board, plan: plan, options: options, scenario: scenario, at: kill,
                    declared: declared, record: &record)
            else { return record }
            board = stopped.board
            plan.resume = stopped.resume
        }
        board.resetFlashCounters()
        var sim = Simulation(link: scenario.link, faults: scenario.faults)
        sim.recordsTrace = configuration.recordsTrace
        let id = sim.addBoard(board)
        let saved = CheckpointKeeper()
        let run = SimulatedFlash.run(
            plan: plan, options: options, on: id, named: "sim", in: &sim, deadline: configuration.deadline,
            onEvent: { saved.keep($0) })
        if configuration.recordsTrace { traceKeeper.keep("run \(scenario.index)", run.trace) }
        guard let after = try? sim.board(id) else { record.violate("setup", "the board vanished"); return record }
        record.seconds = run.statistics.modelledTime.seconds
        record.faults = run.statistics.faults
        record.connections = run.statistics.connections
        if let server = after.smpServer {
            record.busyAnswers = server.statistics.injectedBusy
            record.flashWriteFailures = server.statistics.injectedFlashFailures
        }
        if run.statistics.modelledTime > configuration.deadline {
            record.violate(
                "deadline",
                "the run took \(run.statistics.modelledTime.secondsText) of modelled time, more than \(configuration.deadline.secondsText)"
            )
        }
        record.check(CampaignInvariants.checkWrites(before: board, after: after, declared: declared))
        switch run.outcome {
        case let .success(outcome):
            record.outcome = CampaignOutcome(outcome)
            record.retries = outcome.retries
            record.resumes =
                (outcome.partial?.reconnects ?? 0) + (outcome.full?.resumes ?? 0)
                + max(0, (outcome.nordic?.bootloaderConnections ?? 1) - 1)
            if outcome.partial?.resumedAtBlock != nil { record.resumedAcrossRuns += 1 }
            record.check(CampaignInvariants.checkSuccess(outcome, plan: plan, board: after))
            record.check(
                CampaignInvariants.checkBounds(outcome, connections: run.statistics.connections, options: options))
            if !outcome.verified {
                // Not read back is not done: the plain run must read it back.
                record.error = outcome.unverifiedReason
                var next = plan
                next.resume = saved.point
                repair(after, declared: declared, plan: next, scenario: scenario, record: &record)
            }
        case let .failure(error):
            record.outcome = .failedCleanly
            record.error = run.result.error
            record.check(CampaignInvariants.checkFailure(error, message: run.result.error))
            record.check(CampaignInvariants.checkBounds(nil, connections: run.statistics.connections, options: options))
            var next = plan
            next.resume = saved.point
            repair(after, declared: declared, plan: next, scenario: scenario, record: &record)
        }
        return record
    }

    /// The plain run after a failure or an unverified run: no faults on the link or in the
    /// server; it must succeed, read the board back, and leave it as the target image says.
    private func repair(
        _ failed: SimulatedBoard, declared: Range<UInt32>, plan: FlashPlan, scenario: CampaignScenario,
        record: inout CampaignRecord
    ) {
        var board = failed
        // A board whose flash work hangs (a write the SoftDevice refused, a flash operation that
        // never completed) answers STATUS but writes nothing until it is reset; the failed run
        // said "reset it", and the user does.
        if board.flashWorkHangs { board.reset() }
        board.makeHonest()
        board.setServerFaults(busyAnswers: 0, flashWriteFailures: 0)
        board.resetFlashCounters()
        var sim = Simulation(link: scenario.link, faults: .none)
        sim.recordsTrace = configuration.recordsTrace
        let id = sim.addBoard(board)
        let options = Self.options(scenario.path)
        let run = SimulatedFlash.run(
            plan: plan, options: options, on: id, named: "sim", in: &sim, deadline: configuration.deadline)
        if configuration.recordsTrace { traceKeeper.keep("run \(scenario.index) repair", run.trace) }
        guard let after = try? sim.board(id) else { return }
        record.check(
            CampaignInvariants.checkWrites(before: board, after: after, declared: declared).map {
                ($0.rule, "in the repair run: " + $0.detail)
            })
        switch run.outcome {
        case let .success(outcome):
            record.repaired = outcome.verified
            if outcome.partial?.resumedAtBlock != nil { record.resumedAcrossRuns += 1 }
            record.check(
                CampaignInvariants.checkSuccess(outcome, plan: plan, board: after).map {
                    ($0.rule, "after the repair run: " + $0.detail)
                })
            if !outcome.verified {
                record.violate(
                    "not-repaired",
                    "the plain run after '\(record.error ?? "?")' was not read back either: \(outcome.unverifiedReason ?? "?")"
                )
            }
        case .failure:
            record.repaired = false
            record.violate(
                "not-repaired",
                "the plain run after the failure (\(record.error ?? "?")) failed too: \(run.result.error ?? "?")")
        }
    }

    /// The run that bitflash does not finish: stopped at `at` of modelled time. Returns the board
    /// as left and the last checkpoint, or nil (with a violation) when the setup broke.
    private func killedRun(
        _ board: SimulatedBoard, plan: FlashPlan, options: FlashOptions, scenario: CampaignScenario,
        at: Duration, declared: Range<UInt32>, record: inout CampaignRecord
    )
        -> (board: SimulatedBoard, resume: ResumePoint?)?
    {
        var board = board
        board.resetFlashCounters()
        var sim = Simulation(link: scenario.link, faults: scenario.faults)
        sim.recordsTrace = configuration.recordsTrace
        let id = sim.addBoard(board)
        let saved = CheckpointKeeper()
        let run = SimulatedFlash.run(
            plan: plan, options: options, on: id, named: "sim", in: &sim, deadline: at,
            onEvent: { saved.keep($0) })
        if configuration.recordsTrace {
            traceKeeper.keep("run \(scenario.index) killed at \(at.secondsText)", run.trace)
        }
        guard let after = try? sim.board(id) else { record.violate("setup", "the board vanished"); return nil }
        record.kills += 1
        record.check(
            CampaignInvariants.checkWrites(before: board, after: after, declared: declared).map {
                ($0.rule, "in the killed run: " + $0.detail)
            })
        if case let .success(outcome) = run.outcome {
            // Finished before it was stopped: it must have done its job.
            record.check(
                CampaignInvariants.checkSuccess(outcome, plan: plan, board: after).map {
                    ($0.rule, "before the kill: " + $0.detail)
                })
        }
        return (after, saved.point)
    }

    private mutating func shape(of scenario: CampaignScenario) -> CampaignShape {
        if let s = shapes[scenario.shapeKey] { return s }
        var shape = CampaignShape(writes: 100, modelledTime: .seconds(10))
        if let plan = try? plan(scenario.board, scenario.target), let board = try? makeBoard(scenario) {
            var sim = Simulation(link: scenario.link, faults: .none)
            sim.recordsTrace = false
            let id = sim.addBoard(board)
            let run = SimulatedFlash.run(
                plan: plan, options: Self.options(scenario.path), on: id, named: "sim", in: &sim,
                deadline: configuration.deadline)
            shape = CampaignShape(writes: run.statistics.writes, modelledTime: run.statistics.modelledTime)
        }
        shapes[scenario.shapeKey] = shape
        return shape
    }

    private mutating func image(_ family: ChipFamily, _ image: CampaignImage) -> MemoryImage {
        let key = "\(family) \(image)"
        if let cached = images[key] { return cached }
        let made = SampleFirmware.image(family: family, runtime: image.runtime, program: image.program)
        images[key] = made
        return made
    }

    private mutating func plan(_ board: Board, _ target: CampaignImage) throws -> FlashPlan {
        let key = "\(board.rawValue) \(target)"
        if let cached = plans[key] { return cached }
        let firmware = Firmware(
            fileName: "\(target.runtime)-\(target.program).hex", format: .intelHex,
            sections: [.init(family: board.family, image: image(board.family, target), warnings: [])])
        let made = try FlashPlan.make(firmware: firmware, board: board)
        plans[key] = made
        return made
    }

    private mutating func makeBoard(_ s: CampaignScenario) throws -> SimulatedBoard {
        switch s.kind {
        case .stock:
            return try SimulatedBoard(
                s.board, image: image(s.board.family, s.start),
                mode: s.startsInPairingMode ? .pairing : .application, bluetoothInApplicationMode: true)
        case .nordic:
            var board = try SimulatedBoard(
                profile: SimulatedBoard.stockProfile(s.board), image: image(s.board.family, s.start),
                mode: s.startsInPairingMode ? .pairing : .application)
            if s.startsInBootloader { try board.strandInBootloader() }
            return board
        case .mcuboot:
            guard let app = try plan(s.board, s.start).fullImage else {
                throw FlashError.noFullImage(reason: FlashReason(code: "campaign", message: "no application"))
            }
            var board = try SimulatedBoard.mcuMgrBoard(s.board, primary: app.bytes) { config in
                config.busyAnswerProbability = s.busyAnswers
                config.flashWriteFailureProbability = s.flashWriteFailures
            }
            if s.startsInPairingMode { board.reset(holdingButtons: true) }
            return board
        }
    }
}

/// Keeps the last `FlowReport.checkpoint` of a run, as bitflash keeps it in its state folder.
final class CheckpointKeeper: Sendable {
    private let saved = Mutex<ResumePoint?>(nil)
    func keep(_ event: FlashEvent) {
        if case let .checkpoint(point) = event.report { saved.withLock { $0 = point?.resumePoint } }
    }
    var point: ResumePoint? { saved.withLock { $0 } }
}

/// The traces of one campaign run's parts, in the order they ran.
final class TraceKeeper: Sendable {
    private let kept = Mutex<[(part: String, trace: Trace)]>([])
    func keep(_ part: String, _ trace: Trace) { kept.withLock { $0.append((part, trace)) } }
    func clear() { kept.withLock { $0 = [] } }
    var parts: [(part: String, trace: Trace)] { kept.withLock { $0 } }
}
