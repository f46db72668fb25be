import FirmwareImage
import Flashing
import LinkModel

/// The class's estimate, shown before several boards are flashed: how many boards, through
/// which adapters, how long the class and its slowest board should take. JSON:
/// `{"type":"class-estimate","boards","path","link","connectionIntervalMilliseconds",
/// "classSeconds","slowestBoardSeconds","aloneSeconds","waves","adapters":[{name,
/// connectionLimit, boards, waves}],"assumes"}` (docs/json-and-exit-codes.md).
struct ClassPreview: Encodable, Equatable {
    struct Adapter: Encodable, Equatable {
        var name: String
        /// Nil (JSON null): no limit.
        var connectionLimit: Int?
        var boards: Int
        var waves: Int

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(connectionLimit, forKey: .connectionLimit)
            try c.encode(boards, forKey: .boards)
            try c.encode(waves, forKey: .waves)
        }
        enum CodingKeys: String, CodingKey { case name, connectionLimit, boards, waves }
    }

    var type = "class-estimate"
    var boards: Int
    /// The path each board is expected to take, or `mixed` when they differ (`paths` counts them).
    var path: String
    /// How many boards are expected to take each path (`up-to-date` for boards that hold the file).
    var paths: [String: Int]
    var link: String
    var connectionIntervalMilliseconds: Double
    var classSeconds: Double
    var slowestBoardSeconds: Double
    /// One board's estimate alone on an adapter.
    var aloneSeconds: Double
    var waves: Int
    var adapters: [Adapter]
    /// What the estimate takes for granted, in words.
    var assumes: String

    init(
        _ estimate: ClassEstimate, demand: RadioDemand, link: LinkProfile, assumes: String,
        expected: [ExpectedBoard]? = nil
    ) {
        boards = estimate.boards.count
        let names = expected?.map { $0.path?.rawValue ?? "up-to-date" } ?? [demand.path.rawValue]
        paths = Dictionary(names.map { ($0, 1) }, uniquingKeysWith: +)
        if expected == nil { paths = [demand.path.rawValue: boards] }
        path = paths.count == 1 ? paths.keys.first! : "mixed"
        self.link = link.name
        connectionIntervalMilliseconds = Double(link.connectionIntervalMicroseconds) / 1000
        classSeconds = Self.round(estimate.classTime.seconds)
        slowestBoardSeconds = Self.round(estimate.slowestBoard.seconds)
        aloneSeconds = Self.round(demand.alone.seconds)
        waves = estimate.waves
        adapters = estimate.adapters.enumerated().map { i, a in
            let mine = estimate.boards.filter { $0.adapter == i }
            return Adapter(
                name: a.name, connectionLimit: a.connectionLimit, boards: mine.count,
                waves: mine.map(\.wave).max() ?? 0)
        }
        self.assumes = assumes
    }

    private static func round(_ s: Double) -> Double { (s * 1000).rounded() / 1000 }

    /// One line: `class: 16 boards on 1 adapter (no connection limit), partial: estimated 11.3 s
    /// for the class, the longest board 11.3 s once connected (8.05 s alone; device-requested link, 15 ms)`.
    var line: String {
        let limits = adapters.map { a in
            let limit = a.connectionLimit.map { "at most \($0) at once" } ?? "no connection limit"
            return adapters.count == 1 ? limit : "\(a.name): \(a.boards) boards, \(limit)"
        }
        let waveText = waves > 1 ? " in \(waves) waves" : ""
        let pathText =
            paths.count == 1
            ? path
            : paths.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) on \($0.value)" }
                .joined(separator: ", ")
        return "class: \(boards) boards on \(adapters.count) adapter\(adapters.count == 1 ? "" : "s") "
            + "(\(limits.joined(separator: "; ")))\(waveText), \(pathText): estimated \(Figures.seconds(classSeconds)) "
            + "for the class, the longest board \(Figures.seconds(slowestBoardSeconds)) once connected "
            + "(\(Figures.seconds(aloneSeconds)) alone; \(link) link, \(Duration.microseconds(Int64(connectionIntervalMilliseconds * 1000)).millisecondsText) ms)"
    }
}

/// Making the class's estimate for a class flash (`ClassEstimator`).
extension ClassPreview {
    /// The path each board of a class is expected to take, and what that takes for granted.
    ///
    /// `--mode full` takes the full path the boards offer (`--full-path`, else McuMgr on MCUboot
    /// boards and Nordic DFU on stock ones; stock when unknown). Otherwise a file with a MakeCode
    /// program is expected to go partially, which needs boards that run the file's runtime.
    static func expectedPath(plan: FlashPlan, options: FlashOptions, mcuboot: Bool?) -> (
        path: EstimatedPath, assumes: String
    ) {
        let full: EstimatedPath
        switch options.fullPath {
        case .mcumgr?: full = .mcumgr
        case .nordic?: full = .nordicDFU
        case nil: full = mcuboot == true ? .mcumgr : .nordicDFU
        }
        let fullText =
            full == .mcumgr
            ? "a full update over McuMgr on every board" : "a full update through every board's Nordic bootloader"
        if options.mode == .full || plan.program == nil {
            return (full, fullText + "; every board in its program with Bluetooth on")
        }
        return (
            .partial,
            "partial flashing on every board: the boards run the file's runtime and their program with "
                + "Bluetooth on (a board with another runtime takes a full update, which is longer)"
        )
    }

    /// The class's estimate with each board's own expected path (read from the boards before the
    /// class starts, as each board's session will decide): nil for one board, or when a board's
    /// path cannot be estimated.
    static func make(
        plan: FlashPlan, options: FlashOptions, boards expected: [ExpectedBoard], link: LinkProfile,
        adapters: [ClassEstimator.Adapter]
    ) -> ClassPreview? {
        guard expected.count > 1,
            let (estimate, demands) = ClassEstimator.estimate(
                plan: plan, boards: expected, options: options, link: .profile(link), adapters: adapters),
            let slowest = demands.max(by: { $0.alone < $1.alone })
        else { return nil }
        return ClassPreview(
            estimate, demand: slowest, link: link,
            assumes: "each board's path read from the board before the class starts", expected: expected)
    }

    /// The class's estimate for `count` boards alike flashed with `plan` through `adapters` over
    /// `link`; nil for one board, or when the expected path cannot be estimated.
    static func make(
        plan: FlashPlan, options: FlashOptions, count: Int, link: LinkProfile, mcuboot: Bool?,
        adapters: [ClassEstimator.Adapter]
    ) -> ClassPreview? {
        guard count > 1 else { return nil }
        let expected = expectedPath(plan: plan, options: options, mcuboot: mcuboot)
        guard
            let demand = ClassEstimator.demand(
                plan: plan, path: expected.path, options: options, link: .profile(link))
        else { return nil }
        let estimate = ClassEstimator.estimate(demand, boards: count, adapters: adapters)
        return ClassPreview(estimate, demand: demand, link: link, assumes: expected.assumes)
    }
}
