import Flashing
import LinkModel
import SimulatedBoard

/// How one campaign run ended. `partial`, `full`, `fallback` and `up-to-date` are successes: the
/// board was read back running the program in application mode. `unverified` is not: the session
/// wrote (or found) the program but could not read the board back (exit status 2).
public enum CampaignOutcome: String, Sendable, Equatable, Codable, CaseIterable {
    case partial, full, fallback, upToDate = "up-to-date", unverified, failedCleanly = "failed-cleanly"

    init(_ o: SessionOutcome) {
        guard o.verified else { self = .unverified; return }
        switch o.path {
        case .partial: self = .partial
        case .upToDate: self = .upToDate
        case .full: self = o.fallback ? .fallback : .full
        }
    }
}

/// One campaign run: what happened and what the checks found.
public struct CampaignRecord: Sendable {
    public var scenario: CampaignScenario
    public var outcome: CampaignOutcome = .failedCleanly
    public var error: String?
    /// After a failure or an unverified run: whether the plain run repaired the board (read back
    /// running the program in application mode).
    public var repaired: Bool?
    public var seconds: Double = 0
    public var retries = 0
    public var resumes = 0
    /// Runs of bitflash stopped mid-flash (`CampaignScenario.killAt`), and later runs that
    /// continued an unfinished partial flash from its saved point instead of starting over.
    public var kills = 0
    public var resumedAcrossRuns = 0
    public var connections = 0
    public var faults = FaultCounters()
    public var busyAnswers = 0
    public var flashWriteFailures = 0
    public var violations: [CampaignViolation] = []

    init(scenario: CampaignScenario) { self.scenario = scenario }

    mutating func violate(_ rule: String, _ detail: String) {
        violations.append(
            CampaignViolation(run: scenario.index, rule: rule, detail: detail, scenario: scenario.summary))
    }

    mutating func check(_ found: [(rule: String, detail: String)]) {
        for f in found { violate(f.rule, f.detail) }
    }
}

/// The totals of a campaign: outcomes, violations, retries, faults and modelled-time percentiles.
public struct CampaignReport: Sendable, Codable {
    public var runs = 0
    public var seed: UInt64
    public var paths: [String]
    public var outcomes: [String: Int] = [:]
    public var outcomesByPath: [String: [String: Int]] = [:]
    public var repairedAfterFailure = 0
    public var violations: [CampaignViolation] = []
    public var retries = 0
    public var resumes = 0
    public var kills = 0
    public var resumedAcrossRuns = 0
    public var connections = 0
    public var faults: [String: Int] = [:]
    /// Modelled seconds of each run (the run under faults, not the repair).
    public private(set) var seconds: [Double] = []
    /// A few error messages of failed runs, with how often each occurred.
    public var errors: [String: Int] = [:]

    init(configuration: FaultCampaign.Configuration) {
        seed = configuration.seed
        paths = configuration.paths.map(\.rawValue)
    }

    /// Adds one run's record.
    public mutating func add(_ r: CampaignRecord) {
        runs += 1
        outcomes[r.outcome.rawValue, default: 0] += 1
        outcomesByPath[r.scenario.path.rawValue, default: [:]][r.outcome.rawValue, default: 0] += 1
        if r.repaired == true { repairedAfterFailure += 1 }
        violations += r.violations
        retries += r.retries
        resumes += r.resumes
        kills += r.kills
        resumedAcrossRuns += r.resumedAcrossRuns
        connections += r.connections
        let f = r.faults
        for (name, n) in [
            ("lost writes", f.droppedWrites), ("lost notifications", f.droppedNotifications),
            ("duplicated notifications", f.duplicatedNotifications), ("delayed notifications", f.delayedNotifications),
            ("reordered notifications", f.reorderedNotifications),
            ("disconnects", f.disconnects), ("refused connections", f.refusedConnections),
            ("device resets", f.deviceResets), ("slow erases", f.slowErases),
            ("flash operation errors", f.flashOperationErrors),
            ("SMP busy answers", r.busyAnswers), ("SMP flash-write failures", r.flashWriteFailures)
        ] {
            faults[name, default: 0] += n
        }
        seconds.append(r.seconds)
        if let e = r.error {
            let key = Self.shortened(e)
            if errors[key] != nil || errors.count < 12 { errors[key, default: 0] += 1 }
        }
    }

    /// An error message as the report lists it: whole when it has at most `limit` characters,
    /// else cut after the last whole word that fits, with an ellipsis.
    static func shortened(_ message: String, limit: Int = 160) -> String {
        guard message.count > limit else { return message }
        var cut = message.prefix(limit)
        if let space = cut.lastIndex(of: " ") { cut = cut[..<space] }
        while let last = cut.last, last == " " || last == "," || last == ";" || last == ":" || last == "(" {
            cut.removeLast()
        }
        return cut + " …"
    }

    /// The `p` quantile (0…1) of the modelled run times, nearest rank.
    public func percentile(_ p: Double) -> Double {
        let sorted = seconds.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank - 1, 0), sorted.count - 1)]
    }

    /// True when every invariant held in every run.
    public var passed: Bool { violations.isEmpty }

    /// The report as a text table.
    public func table() -> String {
        var lines: [String] = []
        func row(_ name: String, _ value: String) { lines.append(name.padding(34) + value) }
        row("runs", "\(runs) (seed \(seed), paths \(paths.joined(separator: ", ")))")
        for o in CampaignOutcome.allCases {
            let byPath = outcomesByPath.sorted { $0.key < $1.key }.compactMap { p, m in
                m[o.rawValue].map { "\(p) \($0)" }
            }
            row(
                "  \(o.rawValue)",
                "\(outcomes[o.rawValue] ?? 0)" + (byPath.isEmpty ? "" : "  (\(byPath.joined(separator: ", ")))"))
        }
        let needingRepair =
            (outcomes[CampaignOutcome.failedCleanly.rawValue] ?? 0)
            + (outcomes[CampaignOutcome.unverified.rawValue] ?? 0)
        row("  repaired by the next plain run", "\(repairedAfterFailure) of \(needingRepair) (failed or unverified)")
        row("invariant violations", "\(violations.count)")
        row("retries (successful runs)", "\(retries)")
        row("resumes / reconnects", "\(resumes)")
        row("bitflash killed mid-flash", "\(kills)")
        row("resumed by the next run", "\(resumedAcrossRuns)")
        row("connections", "\(connections)")
        row("faults injected", "\(faults.values.reduce(0, +))")
        for (name, n) in faults.sorted(by: { $0.key < $1.key }) { row("  \(name)", "\(n)") }
        row(
            "modelled time p50 / p90 / p99 / max",
            [0.5, 0.9, 0.99, 1].map { format(percentile($0)) + " s" }.joined(separator: " / "))
        if !errors.isEmpty {
            lines.append("errors of failed runs (first kinds):")
            for (e, n) in errors.sorted(by: { $0.value > $1.value }) { lines.append("  \(n) × \(e)") }
        }
        if !violations.isEmpty {
            lines.append("violations:")
            for v in violations.prefix(50) { lines.append("  \(v)") }
            if violations.count > 50 { lines.append("  … and \(violations.count - 50) more") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func format(_ s: Double) -> String {
        let hundredths = Int((s * 100).rounded())
        let frac = hundredths % 100
        return "\(hundredths / 100).\(frac < 10 ? "0" : "")\(frac)"
    }

    enum CodingKeys: String, CodingKey {
        case runs, seed, paths, outcomes, outcomesByPath, repairedAfterFailure, violations, retries, resumes
        case kills, resumedAcrossRuns
        case connections, faults, errors, p50, p90, p99, max
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(runs, forKey: .runs)
        try c.encode(seed, forKey: .seed)
        try c.encode(paths, forKey: .paths)
        try c.encode(outcomes, forKey: .outcomes)
        try c.encode(outcomesByPath, forKey: .outcomesByPath)
        try c.encode(repairedAfterFailure, forKey: .repairedAfterFailure)
        try c.encode(violations, forKey: .violations)
        try c.encode(retries, forKey: .retries)
        try c.encode(resumes, forKey: .resumes)
        try c.encode(kills, forKey: .kills)
        try c.encode(resumedAcrossRuns, forKey: .resumedAcrossRuns)
        try c.encode(connections, forKey: .connections)
        try c.encode(faults, forKey: .faults)
        try c.encode(errors, forKey: .errors)
        try c.encode(percentile(0.5), forKey: .p50)
        try c.encode(percentile(0.9), forKey: .p90)
        try c.encode(percentile(0.99), forKey: .p99)
        try c.encode(percentile(1), forKey: .max)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        runs = try c.decode(Int.self, forKey: .runs)
        seed = try c.decode(UInt64.self, forKey: .seed)
        paths = try c.decode([String].self, forKey: .paths)
        outcomes = try c.decode([String: Int].self, forKey: .outcomes)
        outcomesByPath = try c.decode([String: [String: Int]].self, forKey: .outcomesByPath)
        repairedAfterFailure = try c.decode(Int.self, forKey: .repairedAfterFailure)
        violations = try c.decode([CampaignViolation].self, forKey: .violations)
        retries = try c.decode(Int.self, forKey: .retries)
        resumes = try c.decode(Int.self, forKey: .resumes)
        kills = try c.decodeIfPresent(Int.self, forKey: .kills) ?? 0
        resumedAcrossRuns = try c.decodeIfPresent(Int.self, forKey: .resumedAcrossRuns) ?? 0
        connections = try c.decode(Int.self, forKey: .connections)
        faults = try c.decode([String: Int].self, forKey: .faults)
        errors = try c.decode([String: Int].self, forKey: .errors)
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
