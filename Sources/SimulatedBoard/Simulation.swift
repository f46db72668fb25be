import FirmwareImage
import LinkModel
import Transport

/// The discrete-event simulation: flows (pure `FlowMachine`s) against simulated boards over
/// the modelled BLE link, on virtual time, on one thread.
///
/// The simulation owns the virtual clock, the event queue, the adapters (one radio each, and
/// the controller's connection limit), the boards and the fault plan. `run` performs a flow's actions and feeds back its events in time
/// order, jumping from event to event, until the flow finishes or the deadline passes.
/// The same inputs and seed give an identical trace.
public struct Simulation: Sendable {
    public let link: LinkProfile
    public let faults: FaultPlan
    /// The virtual clock (it keeps running across runs).
    public internal(set) var now: VirtualInstant = .zero
    /// The adapters the boards are flashed through; each has its own radio and connection limit.
    public let adapters: [AdapterProfile]
    /// Each adapter's radio: when it is busy, and (with `logsAirSlots`) every event's air slot.
    public internal(set) var radios: [RadioArbiter]
    /// The first adapter's radio.
    public var radio: RadioArbiter { radios[0] }
    /// Keep every connection event's air slot in the radios' `slots` (off by default).
    public var logsAirSlots: Bool {
        get { radios[0].logsSlots }
        set { for i in radios.indices { radios[i].logsSlots = newValue } }
    }
    /// Start a flow only when its adapter has a free connection (on by default): a class is
    /// flashed in waves within the adapters' limits, the next board starting when one finishes.
    /// Off, every flow starts at once and the controllers refuse what they cannot hold.
    public var placesWithinLimits = true
    /// At most this many flows at once per adapter, below the adapters' own limits (nil: theirs).
    public var connectionsPerAdapter: Int?
    /// The most connections each adapter held at once, since the simulation began.
    public internal(set) var peakConnections: [Int]
    /// Connections the adapters refused for want of a free connection (HCI 0x0D).
    public internal(set) var refusedForLimit = 0
    /// Record the trace (on by default; turn off for long fault campaigns).
    public var recordsTrace = true
    /// Called with every report a flow makes, and the modelled time since the run began
    /// (progress bars and JSON events).
    public var onReport: (@Sendable (BoardID, FlowReport, Duration) -> Void)?
    /// The words of a typed report in the trace (`FlowWords.text(of:)`, which this module cannot
    /// import); nil: the trace shows the value as Swift prints it.
    public var reportWords: (@Sendable (AnyFlowReport) -> String)?

    var queue = EventQueue<SimEvent>()
    var rng: SplitMix64
    var boards: [BoardSlot] = []
    var connections: [Int: Connection] = [:]
    var nextConnectionID = 1
    var jobs: [Job] = []
    var runStart: VirtualInstant = .zero
    /// Flows started and not yet finished, per adapter.
    var activeJobs: [Int] = []
    /// Flows waiting for a free connection, in the order given.
    var waitingJobs: [Int] = []
    /// Each adapter's LE connection creations, one at a time (`CreationQueue`).
    var creations: [CreationQueue] = []
    /// True while the event loop runs (a finished flow may then start a waiting one).
    var scheduling = false
    var stats = RunStatistics()
    /// Partial-flashing flash operations started in this run (for `FaultPlan.flashOperationErrorAt`).
    var flashOperations = 0
    var trace = Trace()

    /// A simulation over `link`, injecting `faults` (seeded by `faults.seed`), with `adapters`
    /// (one adapter without a connection limit unless given).
    public init(link: LinkProfile = .deviceRequested, faults: FaultPlan = .none, adapters: [AdapterProfile] = []) {
        self.link = link
        self.faults = faults
        self.adapters = adapters.isEmpty ? [.unlimited] : adapters
        radios = Array(repeating: RadioArbiter(), count: self.adapters.count)
        peakConnections = Array(repeating: 0, count: self.adapters.count)
        creations = Array(repeating: CreationQueue(), count: self.adapters.count)
        rng = SplitMix64(seed: faults.seed)
    }

    /// Adds a board; `timing` defaults to its chip family's figures.
    public mutating func addBoard(_ board: SimulatedBoard, timing: DeviceTiming? = nil) -> BoardID {
        boards.append(BoardSlot(board: board, timing: timing ?? DeviceTiming.of(board.profile.family)))
        return BoardID(index: boards.count - 1)
    }

    /// The boards, in the order they were added.
    public var boardIDs: [BoardID] { boards.indices.map { BoardID(index: $0) } }

    /// The board as it is now.
    public func board(_ id: BoardID) throws -> SimulatedBoard {
        guard boards.indices.contains(id.index) else { throw SimulatedBoardError.unknownBoard(id.index) }
        return boards[id.index].board
    }

    /// Changes a board between runs (for example a user's reset into pairing mode:
    /// `sim.updateBoard(id) { $0.reset(holdingButtons: true) }`).
    public mutating func updateBoard(_ id: BoardID, _ change: (inout SimulatedBoard) -> Void) throws {
        guard boards.indices.contains(id.index) else { throw SimulatedBoardError.unknownBoard(id.index) }
        change(&boards[id.index].board)
    }

    /// Runs one flow on one board until it finishes or `deadline` of modelled time passes.
    public mutating func run<M: FlowMachine>(_ machine: M, on board: BoardID, deadline: Duration) -> SimulationRun<
        M.Output
    > {
        let results = runAll([FlowOnBoard(machine, on: board)], deadline: deadline)
        let erased = results.first
        let outcome: Result<M.Output, any Error>
        switch erased?.outcome {
        case .success(let value)?:
            if let typed = value as? M.Output {
                outcome = .success(typed)
            } else {
                outcome = .failure(SimulatedBoardError.noOutcome)
            }
        case .failure(let error)?: outcome = .failure(error)
        case nil: outcome = .failure(SimulatedBoardError.noOutcome)
        }
        return SimulationRun(
            outcome: outcome, modelledTime: erased?.modelledTime ?? .zero,
            statistics: erased?.statistics ?? RunStatistics(), trace: erased?.trace ?? Trace())
    }

    /// Runs several flows, each on its own board, at the same time on the shared radio.
    /// Results come in the order of `flows`; statistics and trace cover the whole run.
    public mutating func runAll(_ flows: [FlowOnBoard], deadline: Duration) -> [SimulationRun<any Sendable>] {
        startRun()
        var early: [Int: any Error] = [:]
        var used = Set<Int>()
        for (i, flow) in flows.enumerated() {
            jobs.append(Job(machine: flow.machine, board: flow.board.index))
            if !boards.indices.contains(flow.board.index) {
                early[i] = SimulatedBoardError.unknownBoard(flow.board.index)
            } else if !used.insert(flow.board.index).inserted {
                early[i] = SimulatedBoardError.boardBusy(flow.board.index)
            }
        }
        activeJobs = Array(repeating: 0, count: adapters.count)
        waitingJobs = []
        for i in jobs.indices {
            if let e = early[i] { finishJob(i, error: e) } else { waitingJobs.append(i) }
        }
        scheduling = true
        startWaitingJobs()
        loop(until: runStart + deadline)
        scheduling = false
        let end = runStart + deadline
        for i in jobs.indices where !jobs[i].finished {
            finishJob(
                i,
                error: queue.isEmpty && now < end
                    ? SimulatedBoardError.flowStalled : SimulatedBoardError.deadlineExceeded(deadline))
        }
        let lastFinish = jobs.map { $0.finishedAt ?? now }.max() ?? now
        stats.modelledMicroseconds = (lastFinish - runStart).wholeMicroseconds
        settleBoards()
        stats.settledMicroseconds = (now - runStart).wholeMicroseconds
        let results = jobs.map { job -> SimulationRun<any Sendable> in
            let outcome: Result<any Sendable, any Error> =
                job.error.map { .failure($0) }
                ?? erasedOutcome(job.machine) ?? .failure(SimulatedBoardError.noOutcome)
            return SimulationRun(
                outcome: outcome, modelledTime: (job.finishedAt ?? now) - runStart,
                statistics: stats, trace: trace, adapter: job.adapter, machine: job.machine)
        }
        jobs = []
        return results
    }

    private mutating func startRun() {
        runStart = now
        stats = RunStatistics()
        flashOperations = 0
        trace = Trace(isRecording: recordsTrace)
        jobs = []
        for (b, slot) in boards.enumerated() where slot.board.mode == .pairing {
            schedulePairingTimeout(b)
        }
        for t in faults.resetDeviceAt {
            for b in boards.indices { queue.schedule(.deviceReset(board: b), at: runStart + t) }
        }
        for t in faults.disconnectAt { queue.schedule(.linkLossAt, at: runStart + t) }
    }

    /// Microseconds since the start of the run, for the trace.
    var t: Int64 { now.microseconds - runStart.microseconds }
}
