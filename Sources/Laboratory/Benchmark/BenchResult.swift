import Flashing

/// One measured run of the flash benchmark: a scenario, a link profile and a strategy.
public struct BenchRun: Sendable, Codable, Equatable {
    public var scenario: String
    public var kind: BenchScenario.Kind
    public var board: String
    public var profile: String
    public var connectionIntervalMilliseconds: Double
    public var strategy: BenchStrategy
    /// The path the session took (`partial`, `full`, `up-to-date`), or nil if it failed.
    public var path: String?
    /// The session's reason code (`runtime-matches`, `runtime-differs`, `forced`, ...).
    public var reason: String
    /// The session's reason in words.
    public var reasonMessage: String
    /// Modelled seconds until the board runs the new program (`RunStatistics.completionTime`).
    public var modelledSeconds: Double
    /// The lower bound the link model allows for what this run had to do.
    public var boundSeconds: Double
    /// What the bound includes, in words.
    public var boundNote: String
    /// Link-layer payload bytes both ways.
    public var bytesOnAir: Int
    /// Program or image bytes written.
    public var payloadBytes: Int
    /// Partial-flashing blocks, or McuMgr upload requests.
    public var transfers: Int
    /// `blocks` or `chunks`.
    public var transferUnit: String
    public var retries: Int
    /// CPU time of this process for the run (thread CPU clock), in milliseconds.
    public var hostCPUMilliseconds: Double
    /// Set when the run failed.
    public var error: String?

    /// `achieved / bound`: `modelledSeconds / boundSeconds` (0 when there is no bound).
    public var ratio: Double = 0

    /// A full update by Secure DFU (counted in data objects; legacy DFU counts packets).
    public var isSecureDFU: Bool { strategy == .nordic && transferUnit == "objects" }
    /// The session's estimate of the path it took, in seconds (nil when it made none).
    public var estimatedSeconds: Double?
    /// `(estimated − modelled) / modelled`.
    public var estimateError: Double?
    /// The estimates of every path the session could take, by path name.
    public var estimates: [String: Double] = [:]
    /// True when auto took a full update although partial flashing was possible.
    public var fullOverPartial = false
    /// Seconds spent before the session decided (connection, switch to pairing mode, memory map).
    public var decidedAtSeconds: Double?
}

/// The speedup of the automatic choice over each full configuration, for one scenario and profile.
public struct BenchSpeedup: Sendable, Codable, Equatable {
    public var scenario: String
    public var profile: String
    public var autoPath: String?
    /// `fullReference / auto` modelled time.
    public var overReference: Double?
    /// `fullBest / auto` modelled time.
    public var overBest: Double?
    /// `forced partial / auto` modelled time (nil where partial flashing is impossible).
    public var overPartial: Double?
    /// True when auto's path took no longer than the other path would have from the same
    /// decision point: forced partial flashing, or a forced full update plus what auto spent
    /// before deciding (nil when auto failed or only one path was possible).
    public var autoWasFastest: Bool?
}

/// Everything one `bitflash-lab bench flash` run measured.
public struct BenchReport: Sendable, Codable, Equatable {
    /// The goals the report checks: partial rows at most `partialGoal × bound`, best-full rows at
    /// most `fullGoal × bound`, Secure DFU rows (stock micro:bit V2 and Calliope mini 3) at most
    /// `secureDFUGoal × bound`. Legacy DFU (V1, Calliope mini 1/2) has none: its receipt every 8
    /// packets is what the nRF51 bootloader's buffers need (docs/nordic-dfu.md).
    public static let partialGoal = 1.05
    public static let fullGoal = 1.10
    public static let secureDFUGoal = 1.20

    public var runs: [BenchRun]
    public var speedups: [BenchSpeedup]
    /// Model settings and how the bounds are made, one sentence each.
    public var notes: [String]

    public init(runs: [BenchRun], notes: [String]) {
        self.runs = runs
        self.notes = notes
        var speedups: [BenchSpeedup] = []
        var seen = Set<String>()
        for run in runs where run.strategy == .auto && seen.insert(run.scenario + "\u{0}" + run.profile).inserted {
            func time(_ s: BenchStrategy) -> Double? {
                runs.first {
                    $0.scenario == run.scenario && $0.profile == run.profile && $0.strategy == s && $0.error == nil
                }?.modelledSeconds
            }
            let auto = run.error == nil && run.modelledSeconds > 0 ? run.modelledSeconds : nil
            // The other path as auto would have taken it: partial flashing forced against a full
            // update, and a full update forced (which skips the memory-map read) plus the time auto
            // spent before deciding against partial flashing.
            let other: Double? =
                run.path == "full"
                ? time(.partialOnly)
                : (run.path == "partial" ? time(.fullBest).map { $0 + (run.decidedAtSeconds ?? 0) } : nil)
            speedups.append(
                BenchSpeedup(
                    scenario: run.scenario, profile: run.profile, autoPath: run.path,
                    overReference: auto.flatMap { a in time(.fullReference).map { $0 / a } },
                    overBest: auto.flatMap { a in time(.fullBest).map { $0 / a } },
                    overPartial: auto.flatMap { a in time(.partialOnly).map { $0 / a } },
                    autoWasFastest: auto.flatMap { a in other.map { a <= $0 } }))
        }
        self.speedups = speedups
    }

    /// The profiles in the order they were run.
    public var profiles: [String] { runs.map(\.profile).uniqued() }
    /// The scenarios in the order they were run.
    public var scenarios: [String] { runs.map(\.scenario).uniqued() }

    /// The goal of a run's `achieved / bound`, or nil when the run has none (the reference configuration).
    public static func goal(of run: BenchRun) -> Double? {
        switch (run.strategy, run.path) {
        case (.auto, "partial"?), (.auto, "up-to-date"?), (.partialOnly, _): return partialGoal
        case (.auto, "full"?), (.fullBest, _): return fullGoal
        case (.nordic, _) where run.isSecureDFU: return secureDFUGoal
        default: return nil
        }
    }

    /// The largest `|estimate error|` over the runs that made an estimate.
    public var largestEstimateError: Double? {
        runs.compactMap { $0.estimateError.map(abs) }.max()
    }

    /// Runs whose ratio is above their goal, or that failed.
    public var rowsMissingTheirGoal: [BenchRun] {
        runs.filter { run in run.error != nil || Self.goal(of: run).map { run.ratio > $0 } ?? false }
    }
}

extension Array where Element: Hashable {
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
