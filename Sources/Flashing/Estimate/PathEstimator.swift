import FirmwareImage
import LinkModel

/// A path bitflash can take on a board, as the estimates name it.
public enum EstimatedPath: String, Sendable, Equatable, Codable, CaseIterable {
    /// Partial flashing of the MakeCode program region.
    case partial
    /// A full update over McuMgr (SMP), MCUboot swapping the slots.
    case mcumgr
    /// A full update over Nordic's legacy or secure DFU.
    case nordicDFU = "nordic-dfu"

    /// The path a session reports: partial, or full for both full updates.
    public var flashPath: FlashPath { self == .partial ? .partial : .full }
}

/// How long one path should take, in parts that add up to the whole.
public struct PathEstimate: Sendable, Equatable, Codable {
    /// One named part of the estimate, e.g. `upload` or `swap`.
    public struct Part: Sendable, Equatable, Codable {
        public var name: String
        public var seconds: Double
        public init(name: String, duration: Duration) {
            self.name = name
            self.seconds = duration.seconds
        }
    }

    public var path: EstimatedPath
    /// The whole estimate, in seconds from the start of the session.
    public var seconds: Double
    /// What is sent: `blocks`, `pages`, `bytes`, `frames`, as the path counts them.
    public var counts: [String: Int]
    public var parts: [Part]
    /// Inputs that were assumed rather than known, in words (empty when all were known).
    public var assumptions: [String]
    /// Work counted in `seconds` that the board may skip, in seconds (nil: none): a CODAL board
    /// does not erase a page that is already blank, and which pages are cannot be read over
    /// Bluetooth. The path may take this much less.
    public var skippableSeconds: Double?

    public init(
        path: EstimatedPath, parts: [Part], counts: [String: Int], assumptions: [String] = [],
        skippableSeconds: Double? = nil
    ) {
        self.path = path
        self.parts = parts
        self.counts = counts
        self.assumptions = assumptions
        self.skippableSeconds = skippableSeconds.flatMap { $0 > 0 ? $0 : nil }
        self.seconds = parts.reduce(0) { $0 + $1.seconds }
    }

    /// The estimate if the board skips all the work it may skip.
    public var optimisticSeconds: Double { seconds - (skippableSeconds ?? 0) }

    /// The whole estimate.
    public var duration: Duration { .microseconds(Int64((seconds * 1_000_000).rounded())) }
}

/// The board's own costs: flash erase and writes, reboot, and the fixed costs of a full update.
///
/// Defaults are the link model's figures (`DeviceTiming.of(family)`) and those of a Zephyr
/// SMP server with MCUboot (reset 250 ms after its answer, 200 µs per request, a swap that
/// erases and rewrites both slots page by page).
public struct BoardCosts: Sendable, Equatable {
    public var family: ChipFamily
    public var timing: DeviceTiming
    /// From the `reset` answer to the reset.
    public var resetDelay: Duration
    /// CPU time of one SMP request on the board.
    public var smpCommandTime: Duration

    public init(
        family: ChipFamily, timing: DeviceTiming? = nil, resetDelay: Duration = .milliseconds(250),
        smpCommandTime: Duration = .microseconds(200)
    ) {
        self.family = family
        self.timing = timing ?? DeviceTiming.of(family)
        self.resetDelay = resetDelay
        self.smpCommandTime = smpCommandTime
    }

    public var pageSize: Int { Int(family.pageSize) }

    /// Erasing and writing one whole page.
    public var pageRewrite: Duration { timing.pageErase + timing.wordWrite * (pageSize / 4) }

    /// MCUboot's swap (or revert) of `bytes`: both slots' pages erased and rewritten.
    public func swap(bytes: Int) -> Duration { pageRewrite * (2 * pages(bytes)) }

    /// Pages covering `bytes`.
    public func pages(_ bytes: Int) -> Int { (max(bytes, 0) + pageSize - 1) / pageSize }
}

/// What an estimator needs to know about the session so far.
public struct EstimateContext: Sendable, Equatable {
    /// The link as measured on this connection, or a named profile.
    public var link: LinkEstimate
    public var board: BoardCosts
    /// Time already spent when the estimate is made (connection, mode switch, memory-map read);
    /// added to every path's estimate so that estimates compare with whole runs.
    public var elapsed: Duration
    /// True when the partial-flashing read still has to happen (plan mode without a board).
    public var includesMemoryMapRead: Bool

    public init(link: LinkEstimate, board: BoardCosts, elapsed: Duration = .zero, includesMemoryMapRead: Bool = false) {
        self.link = link
        self.board = board
        self.elapsed = elapsed
        self.includesMemoryMapRead = includesMemoryMapRead
    }

    /// The fixed part before the decision: `elapsed`, or for a board not yet connected the
    /// connection setup and STATUS plus two REGION_INFO round trips.
    public var beforeDecision: PathEstimate.Part {
        if includesMemoryMapRead {
            let ci = link.profile.connectionIntervalMicroseconds
            return .init(
                name: "connect and read the memory map",
                duration: link.profile.connectionSetup + .microseconds(3 * 2 * ci))
        }
        return .init(name: "so far (connect, memory map)", duration: elapsed)
    }
}

/// Estimates one path's time on a board. One type per path (`PartialEstimator`,
/// `McuMgrEstimator`, `NordicDFUEstimator`), which `PathDecision` compares with the others.
///
/// Adding a path: its case in `EstimatedPath`, a conforming type that
/// turns the image size and the board's costs into `PathEstimate.Part`s (starting with
/// `context.beforeDecision`), and the session's list of full paths the board offers
/// (`SessionFlow.fullEstimators()`), which routes the chosen path by `PathDecision.chosen`.
public protocol PathEstimator: Sendable {
    /// The path this estimator is for.
    var path: EstimatedPath { get }
    /// The whole time of the path, from the start of the session until the board runs the
    /// new program (and the session has verified it).
    func estimate(_ context: EstimateContext) -> PathEstimate
}
