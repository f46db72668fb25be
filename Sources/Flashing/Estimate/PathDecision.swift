/// Which path the user prefers when more than one is possible (`--prefer`).
public enum PathPreference: String, Sendable, Equatable, Codable, CaseIterable {
    /// Partial flashing whenever it is possible, however the estimates compare.
    case partial
    /// A full update whenever one is possible.
    case full
}

/// The choice among the possible paths: each path's estimate, the one taken, why, and by how much.
public struct PathDecision: Sendable, Equatable, Codable {
    /// How the path was chosen.
    public enum Basis: String, Sendable, Equatable, Codable {
        /// The lowest estimate among the possible paths.
        case fastest
        /// `--prefer` named a possible path.
        case preferred
        /// `--mode` allows one path only.
        case forced
        /// Only one path is possible.
        case onlyPath = "only-path"
    }

    /// The estimates of the possible paths, fastest first.
    public var estimates: [PathEstimate]
    public var chosen: EstimatedPath
    public var basis: Basis
    /// The next-best estimate minus the chosen one, in seconds (negative when a preference or
    /// `--mode` took the slower path); nil with one path.
    public var marginSeconds: Double?
    /// The link the estimates used.
    public var link: LinkEstimate
    /// The same paths over the standard link profiles (plan mode only; empty otherwise).
    public var byProfile: [ProfileEstimates] = []
    /// Seconds the session had spent when it decided (connection, mode switch, memory map).
    public var decidedAfterSeconds: Double = 0
    /// Paths the board offers that were left out, and why (e.g. an image larger than the slot).
    public var excluded: [ExcludedPath] = []

    /// Chooses among `estimators` (the possible paths).
    /// - Parameters:
    ///   - forced: the only path `--mode` allows, when it names one.
    ///   - prefer: `--prefer`: taken when a path of that kind is possible.
    public static func choose(
        _ estimators: [any PathEstimator], context: EstimateContext,
        forced: EstimatedPath? = nil, prefer: PathPreference? = nil
    ) -> PathDecision? {
        let estimates = estimators.map { $0.estimate(context) }.sorted { $0.seconds < $1.seconds }
        guard let fastest = estimates.first else { return nil }
        var chosen = fastest
        var basis = Basis.fastest
        // A full update goes first only when it is faster even if the board skips all the work
        // partial flashing may not need (blank pages a CODAL board does not erase): otherwise the
        // two are within what the estimates cannot know, and partial flashing sends less.
        if fastest.path != .partial, let partial = estimates.first(where: { $0.path == .partial }),
            partial.optimisticSeconds <= fastest.seconds
        {
            chosen = partial
        }
        if estimates.count == 1 {
            basis = .onlyPath
        } else if let forced, let e = estimates.first(where: { $0.path == forced }) {
            chosen = e
            basis = .forced
        } else if let prefer, let e = estimates.first(where: { ($0.path == .partial) == (prefer == .partial) }) {
            chosen = e
            basis = .preferred
        }
        let others = estimates.filter { $0.path != chosen.path }
        let margin = others.first.map { $0.seconds - chosen.seconds }
        return PathDecision(
            estimates: estimates, chosen: chosen.path, basis: basis, marginSeconds: margin, link: context.link,
            decidedAfterSeconds: context.elapsed.seconds)
    }

    /// The chosen path's estimate.
    public var chosenEstimate: PathEstimate? { estimates.first { $0.path == chosen } }

    /// One sentence: the chosen path with its estimate, each other path's, and the margin.
    public var summary: String {
        func s(_ x: Double) -> String { String(format: "%.1f s", x) }
        var text = "\(chosen.rawValue) (estimated \(s(chosenEstimate?.seconds ?? 0)))"
        let others = estimates.filter { $0.path != chosen }.map { "\($0.path.rawValue) \(s($0.seconds))" }
        if !others.isEmpty { text += " against " + others.joined(separator: ", ") }
        switch basis {
        case .fastest:
            if let m = marginSeconds, m >= 0 { text += ": \(s(m)) faster" }
            if let m = marginSeconds, m < 0, let e = chosenEstimate {
                text += ": as little as \(s(e.optimisticSeconds)) when pages it writes are blank (not erased)"
            }
        case .preferred:
            text += ": preferred (--prefer)" + (marginSeconds.map { $0 < 0 ? ", \(s(-$0)) slower" : "" } ?? "")
        case .forced: text += ": forced (--mode)"
        case .onlyPath: text += ": the only possible path"
        }
        for e in excluded { text += "; \(e.path.rawValue) excluded: \(e.reason)" }
        let ci = link.profile.connectionInterval.millisecondsText
        text += " (connection interval \(ci) ms, \(link.source.rawValue); MTU \(link.profile.attMTU))"
        return text
    }
}

/// A path the board offers that a decision or a plan left out, with the reason.
public struct ExcludedPath: Sendable, Equatable, Codable {
    public var path: EstimatedPath
    public var reason: String

    public init(path: EstimatedPath, reason: String) {
        self.path = path
        self.reason = reason
    }
}
