import FirmwareImage
import Flashing
import LinkModel
import SimulatedBoard
import SimulatedFlashing

/// A class set over one or more adapters: `boards` boards, each flashed with the same edit,
/// spread over `adapters` adapters of one profile, in waves within each adapter's connection
/// limit. Each result is set beside the bounds the link model allows.
public enum AdapterBench {
    /// One class run.
    public struct Row: Sendable, Codable, Equatable {
        public var profile: String
        public var connectionIntervalMilliseconds: Double
        public var adapterProfile: String
        public var connectionsPerAdapter: Int
        public var adapters: Int
        public var boards: Int
        /// Boards read back running the new program.
        public var verified: Int
        /// Modelled time until the last board runs the new program.
        public var modelledSeconds: Double
        /// One board alone: its modelled time and the link model's lower bound (`BenchRunner`).
        public var oneBoardSeconds: Double
        public var oneBoardBoundSeconds: Double
        /// Air-time bound: the busiest radio carries at least ⌈boards / adapters⌉ boards' air time
        /// (one board's air time as measured alone); never less than one board's bound.
        public var radioBoundSeconds: Double
        /// Wave bound: ⌈boards / (adapters × connections)⌉ boards one after another, each at least
        /// one board's bound.
        public var waveBoundSeconds: Double
        /// The busiest radio's air time in this run.
        public var busiestRadioSeconds: Double
        public var error: String?

        /// The larger bound, and the run against it.
        public var boundSeconds: Double { max(radioBoundSeconds, waveBoundSeconds) }
        public var ratio: Double { boundSeconds > 0 ? modelledSeconds / boundSeconds : 0 }
    }

    /// How the figures are made, for the report.
    public static let notes = [
        "Each board runs the sample V2 heart program in application mode; the counter program (same runtime) is flashed: a partial flash, verified by a read-back.",
        "Boards are placed as the flash command places them: at most the adapter's connections at once per adapter; a waiting board starts when one finishes, on the adapter that frees up first.",
        "Radio bound: ⌈boards/adapters⌉ × one board's air time (measured alone), at least one board's lower bound. Wave bound: ⌈boards/(adapters × connections)⌉ × one board's lower bound (BenchRunner). Bound = the larger."
    ]

    /// Runs `boards` boards over 1…n adapters of `adapter` for each profile.
    public static func run(
        boards: Int, adapterCounts: [Int], adapter: AdapterProfile, profiles: [LinkProfile],
        progress: ((Row) -> Void)? = nil
    ) -> [Row] {
        guard let scenario = BenchScenario.samples(boards: [.microbitV2]).first(where: { $0.kind == .edit }) else {
            return []
        }
        var rows: [Row] = []
        for profile in profiles {
            let alone = BenchRunner.run(scenario, profile: profile, strategy: .auto)
            let air = oneBoardAir(scenario, profile: profile)
            for count in adapterCounts {
                var row = classRun(scenario, boards: boards, adapters: count, adapter: adapter, profile: profile)
                row.oneBoardSeconds = alone.modelledSeconds
                row.oneBoardBoundSeconds = alone.boundSeconds
                let perRadio = Double((boards + count - 1) / count)
                row.radioBoundSeconds = max(perRadio * air, alone.boundSeconds)
                let waves = Double(
                    (boards + count * row.connectionsPerAdapter - 1) / (count * row.connectionsPerAdapter))
                row.waveBoundSeconds = waves * alone.boundSeconds
                progress?(row)
                rows.append(row)
            }
        }
        return rows
    }

    /// One board's air time, alone on an adapter.
    static func oneBoardAir(_ scenario: BenchScenario, profile: LinkProfile) -> Double {
        var sim = Simulation(link: profile)
        sim.recordsTrace = false
        sim.logsAirSlots = true
        guard let (entries, _) = try? boards(1, scenario, in: &sim) else { return 0 }
        _ = SimulatedFlash.runAll(entries, in: &sim)
        return airSeconds(sim.radios[0])
    }

    static func airSeconds(_ radio: RadioArbiter) -> Double {
        Double(radio.slots.reduce(Int64(0)) { $0 + $1.end - $1.start }) / 1e6
    }

    static func boards(_ n: Int, _ scenario: BenchScenario, in sim: inout Simulation) throws -> (
        [(plan: FlashPlan, board: BoardID, name: String)], Int
    ) {
        let start = try FlashPlan.make(firmware: scenario.running, board: scenario.board)
        guard let app = start.fullImage else {
            throw FlashError.noFullImage(reason: FlashReason(code: "bench", message: "no application"))
        }
        let plan = try FlashPlan.make(firmware: scenario.update, board: scenario.board)
        var out: [(plan: FlashPlan, board: BoardID, name: String)] = []
        for i in 0..<n {
            let id = sim.addBoard(try SimulatedBoard.mcuMgrBoard(scenario.board, primary: app.bytes))
            out.append((plan, id, "board-\(i + 1)"))
        }
        return (out, n)
    }

    static func classRun(
        _ scenario: BenchScenario, boards n: Int, adapters count: Int, adapter: AdapterProfile, profile: LinkProfile
    ) -> Row {
        var sim = Simulation(link: profile, adapters: Array(repeating: adapter, count: count))
        sim.recordsTrace = false
        sim.logsAirSlots = true
        var row = Row(
            profile: profile.name,
            connectionIntervalMilliseconds: Double(profile.connectionIntervalMicroseconds) / 1000,
            adapterProfile: adapter.name, connectionsPerAdapter: adapter.maxConnections, adapters: count, boards: n,
            verified: 0, modelledSeconds: 0, oneBoardSeconds: 0, oneBoardBoundSeconds: 0, radioBoundSeconds: 0,
            waveBoundSeconds: 0, busiestRadioSeconds: 0, error: nil)
        do {
            let (entries, _) = try boards(n, scenario, in: &sim)
            let runs = SimulatedFlash.runAll(entries, in: &sim)
            row.verified = runs.filter { $0.result.error == nil && $0.result.verified }.count
            row.modelledSeconds = runs.first?.statistics.completionTime.seconds ?? 0
            row.error = runs.compactMap(\.result.error).first
            row.busiestRadioSeconds = sim.radios.map(airSeconds).max() ?? 0
            if sim.peakConnections.contains(where: { $0 > adapter.maxConnections }) || sim.refusedForLimit > 0 {
                row.error = "an adapter held more than its connections"
            }
        } catch {
            row.error = "\(error)"
        }
        return row
    }
}
