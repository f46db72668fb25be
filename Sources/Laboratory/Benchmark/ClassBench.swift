import FirmwareImage
import Flashing
import LinkModel
import SimulatedBoard
import SimulatedFlashing
import Transport

/// The class-set benchmark: N simulated boards on one adapter, all started together, each
/// flashed the same way; the modelled class time set beside the class estimate
/// (`ClassEstimator`) and beside the single-board estimate that left the shared radio out.
public enum ClassBench {
    /// How each board of the class is flashed.
    public enum Case: String, Sendable, Codable, CaseIterable {
        /// An edit: partial flashing on a board that runs the old program (Bluetooth on).
        case partial
        /// A new runtime: a full update over McuMgr on an MCUboot board.
        case mcumgr
        /// A new runtime: a full update through a stock board's Nordic bootloader (Secure DFU on V2).
        case nordic = "nordic-dfu"
    }

    /// One class: boards × profile × case.
    public struct Row: Sendable, Codable, Equatable {
        public var path: String
        public var board: String
        public var profile: String
        public var connectionIntervalMilliseconds: Double
        public var boards: Int
        /// From the start until the last board runs its new program (modelled).
        public var modelledClassSeconds: Double
        /// The slowest board's own time (modelled; the class time when all start together).
        public var modelledSlowestSeconds: Double
        /// The fastest board's own time (modelled).
        public var modelledFastestSeconds: Double
        public var estimatedClassSeconds: Double
        public var estimatedSlowestSeconds: Double
        /// One board's estimate with the link to itself: what each board was told before.
        public var singleBoardSeconds: Double
        /// Boards that did not finish with the expected path.
        public var failures: Int
        /// The adapter's connection limit (nil: none, all boards at once).
        public var connectionLimit: Int?
        /// The largest error (by size, with its sign) of one board's estimated finish against
        /// the time it finished (both from the start of the class): the ETA each board is shown.
        public var worstBoardError: Double = 0
        /// Retries of all boards together (requests repeated, objects or blocks sent again,
        /// reconnections): with no injected faults, 0.
        public var retries = 0
        /// Each board's estimated and modelled finish from the start of the class, in the order
        /// the boards were given (only when asked for: `run(…, perBoard: true)`).
        public var boardFinishes: [BoardFinish]?

        /// estimate / modelled − 1 of the class time.
        public var classError: Double {
            modelledClassSeconds > 0 ? estimatedClassSeconds / modelledClassSeconds - 1 : 0
        }
        /// The single-board estimate's error against the modelled class time.
        public var singleBoardError: Double {
            modelledClassSeconds > 0 ? singleBoardSeconds / modelledClassSeconds - 1 : 0
        }
    }

    /// One board's finish, estimated and modelled, from the start of the class (seconds).
    public struct BoardFinish: Sendable, Codable, Equatable {
        public var estimated: Double
        public var modelled: Double
    }

    /// The board counts the benchmark reports.
    public static let boardCounts = [8, 16, 32, 64]

    /// The scenario every case flashes: the sample edit on micro:bit V2, or the sample new runtime.
    static func scenario(_ c: Case) -> BenchScenario {
        let all = BenchScenario.samples(boards: [.microbitV2])
        let name = c == .partial ? "sample V2 heart → counter" : "sample V2 runtime r1 → r2"
        return all.first { $0.name == name } ?? all[0]
    }

    /// The plan each board of a class of `c` is flashed with.
    public static func samplePlan(_ c: Case) throws -> FlashPlan {
        let scenario = scenario(c)
        return try FlashPlan.make(firmware: scenario.update, board: scenario.board)
    }

    /// The connection limit of `adapter` as the estimate takes it (nil for `.unlimited`).
    public static func limit(of adapter: AdapterProfile) -> Int? {
        AdapterProfile.limit(adapter.maxConnections)
    }

    /// Runs one class of `boards` boards over `profile` through one adapter of `adapter`'s kind
    /// (its connection limit makes waves; `.unlimited` holds every board at once).
    public static func run(
        _ c: Case, boards: Int, profile: LinkProfile, adapter: AdapterProfile = .unlimited, perBoard: Bool = false,
        onRetry: (@Sendable (String) -> Void)? = nil
    ) -> Row {
        let scenario = scenario(c)
        let board = scenario.board
        var row = Row(
            path: c.rawValue, board: board.displayName, profile: profile.name,
            connectionIntervalMilliseconds: Double(profile.connectionIntervalMicroseconds) / 1000, boards: boards,
            modelledClassSeconds: 0, modelledSlowestSeconds: 0, modelledFastestSeconds: 0, estimatedClassSeconds: 0,
            estimatedSlowestSeconds: 0, singleBoardSeconds: 0, failures: boards, connectionLimit: limit(of: adapter))
        var sim = Simulation(link: profile, adapters: [adapter])
        sim.recordsTrace = false
        if let onRetry {
            sim.onReport = { board, report, t in
                if case let .retry(why) = report.worded { onRetry("\(board) at \(t): \(why)") }
            }
        }
        var options = (c == .nordic ? BenchStrategy.nordic : c == .mcumgr ? .fullBest : .partialOnly).options
        if c == .nordic { options.mode = .full }
        var entries: [(plan: FlashPlan, board: BoardID, name: String)] = []
        var estimatedFinishes: [Double]?
        do {
            let plan = try samplePlan(c)
            let running = try scenario.running.image(for: board)
            for i in 0..<boards {
                let simulated: SimulatedBoard
                if c == .nordic {
                    simulated = try SimulatedBoard(profile: SimulatedBoard.stockProfile(board), image: running)
                } else {
                    guard let app = try FlashPlan.make(firmware: scenario.running, board: board).fullImage else {
                        return row
                    }
                    simulated = try SimulatedBoard.mcuMgrBoard(board, primary: app.bytes)
                }
                entries.append((plan, sim.addBoard(simulated), "sim-\(i + 1)"))
            }
            let expected: EstimatedPath = c == .partial ? .partial : c == .mcumgr ? .mcumgr : .nordicDFU
            guard
                let demand = ClassEstimator.demand(
                    plan: plan, path: expected, options: options, link: .profile(profile))
            else { return row }
            let estimate = ClassEstimator.estimate(
                demand, boards: boards, adapters: [.init(name: adapter.name, connectionLimit: row.connectionLimit)])
            row.estimatedClassSeconds = estimate.classTime.seconds
            row.estimatedSlowestSeconds = estimate.slowestBoard.seconds
            row.singleBoardSeconds = demand.alone.seconds
            estimatedFinishes = estimate.boards.sorted { $0.index < $1.index }.map(\.finish.seconds)
        } catch {
            return row
        }
        let runs = SimulatedFlash.runAll(entries, options: options, in: &sim)
        let want: FlashPath = c == .partial ? .partial : .full
        row.retries = runs.reduce(0) { $0 + $1.result.retries }
        row.failures = runs.filter { $0.result.error != nil || $0.result.path != want }.count
        let times = runs.map(\.result.seconds)
        if let estimated = estimatedFinishes, estimated.count == times.count {
            for (e, m) in zip(estimated, times) where m > 0 {
                let error = e / m - 1
                if abs(error) > abs(row.worstBoardError) { row.worstBoardError = error }
            }
            if perBoard { row.boardFinishes = zip(estimated, times).map { BoardFinish(estimated: $0, modelled: $1) } }
        }
        row.modelledSlowestSeconds = times.max() ?? 0
        row.modelledFastestSeconds = times.min() ?? 0
        row.modelledClassSeconds = row.modelledSlowestSeconds
        return row
    }
}
