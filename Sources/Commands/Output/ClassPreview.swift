import Flasher
import Flashing
import LinkModel

/// The class's estimate (the library's `ClassForecast`), shown before several boards are flashed: how many boards, through
/// which adapters, how long the class and its slowest board should take. JSON:
/// `{"type":"class-estimate","boards","path","link","connectionIntervalMilliseconds",
/// "classSeconds","slowestBoardSeconds","aloneSeconds","waves","adapters":[{name,
/// connectionLimit, boards, waves}],"assumes","kinds"}` (docs/json-and-exit-codes.md).
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
    /// How many boards of each kind, when the boards were read before the class (real boards).
    var kinds: [String: Int]?
    /// When each board should run its new program, in seconds from the class's start, in the
    /// order the boards were given: the live grid's class ETA (not in the JSON).
    var boardFinishes: [Double] = []

    enum CodingKeys: String, CodingKey {
        case type, boards, path, paths, link, connectionIntervalMilliseconds, classSeconds, slowestBoardSeconds
        case aloneSeconds, waves, adapters, assumes, kinds
    }

    /// The forecast in the command line's words and JSON.
    init(_ forecast: ClassForecast) {
        let estimate = forecast.estimate
        boards = estimate.boards.count
        paths = forecast.paths
        path = paths.count == 1 ? paths.keys.first! : "mixed"
        link = forecast.link.name
        connectionIntervalMilliseconds = Double(forecast.link.connectionIntervalMicroseconds) / 1000
        classSeconds = Self.round(estimate.classTime.seconds)
        slowestBoardSeconds = Self.round(estimate.slowestBoard.seconds)
        aloneSeconds = Self.round(forecast.slowest.alone.seconds)
        waves = estimate.waves
        adapters = estimate.adapters.enumerated().map { i, a in
            let mine = estimate.boards.filter { $0.adapter == i }
            return Adapter(
                name: a.name, connectionLimit: a.connectionLimit, boards: mine.count,
                waves: mine.map(\.wave).max() ?? 0)
        }
        assumes = forecast.assumes
        kinds = forecast.kinds
        boardFinishes = estimate.boards.sorted { $0.index < $1.index }.map { Self.round($0.finish.seconds) }
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
