import FirmwareImage
import Flashing
import LinkModel

/// What a class flash (several boards) is expected to take, before it starts: the path each
/// board is expected to take, the class's schedule on its adapters and its slowest board.
/// The command line words it (`class: 16 boards on 1 adapter …`); a program reads the numbers.
public struct ClassForecast: Sendable, Equatable {
    /// The class on its adapters: each board's wave and adapter, the class's time.
    public var estimate: ClassEstimate
    /// The board that asks most of the radio (its time alone on an adapter is `slowest.alone`).
    public var slowest: RadioDemand
    /// The link the estimate is made for.
    public var link: LinkProfile
    /// How many boards are expected to take each path, by its name (`partial`, `mcumgr`,
    /// `nordic-dfu`; `up-to-date` for boards that already hold the file).
    public var paths: [String: Int]
    /// What the estimate takes for granted, in words.
    public var assumes: String
    /// How many boards of each kind the estimate is for, by the kind's name (`micro:bit V2`),
    /// when the boards were read first (nil for a class estimated for one kind throughout).
    public var kinds: [String: Int]? = nil

    /// The path every board of a class is expected to take when the boards cannot be read
    /// first, and what that takes for granted.
    ///
    /// `FlashMode.full` takes the full path the boards offer (`FlashOptions.fullPath`, else
    /// McuMgr on MCUboot boards and Nordic DFU on stock ones; stock when unknown). Otherwise a
    /// file with a MakeCode program is expected to go partially, which needs boards that run the
    /// file's runtime.
    public static func expectedPath(plan: FlashPlan, options: FlashOptions, mcuboot: Bool?) -> (
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

    /// The class with each board's own expected path (read from the boards before the class
    /// starts, as each board's session will decide): nil for one board, or when a board's path
    /// cannot be estimated.
    public static func make(
        plan: FlashPlan, options: FlashOptions, boards expected: [ExpectedBoard], link: LinkProfile,
        adapters: [ClassEstimator.Adapter]
    ) -> ClassForecast? {
        make(boards: expected.map { (plan, $0) }, options: options, link: link, adapters: adapters)
    }

    /// The class with each board's own plan (for its kind of board) and expected path: nil for
    /// one board, or when a board's path cannot be estimated.
    public static func make(
        boards: [(plan: FlashPlan, expected: ExpectedBoard)], options: FlashOptions, link: LinkProfile,
        adapters: [ClassEstimator.Adapter]
    ) -> ClassForecast? {
        let expected = boards.map(\.expected)
        guard expected.count > 1,
            let (estimate, demands) = ClassEstimator.estimate(
                boards: boards, options: options, link: .profile(link), adapters: adapters),
            let slowest = demands.max(by: { $0.alone < $1.alone })
        else { return nil }
        return ClassForecast(
            estimate: estimate, slowest: slowest, link: link,
            paths: Dictionary(expected.map { ($0.path?.rawValue ?? "up-to-date", 1) }, uniquingKeysWith: +),
            assumes: "each board's path read from the board before the class starts")
    }

    /// The class of `count` boards alike, each taking `expectedPath`: nil for one board, or
    /// when that path cannot be estimated.
    public static func make(
        plan: FlashPlan, options: FlashOptions, count: Int, link: LinkProfile, mcuboot: Bool?,
        adapters: [ClassEstimator.Adapter]
    ) -> ClassForecast? {
        guard count > 1 else { return nil }
        let expected = expectedPath(plan: plan, options: options, mcuboot: mcuboot)
        guard
            let demand = ClassEstimator.demand(
                plan: plan, path: expected.path, options: options, link: .profile(link))
        else { return nil }
        return ClassForecast(
            estimate: ClassEstimator.estimate(demand, boards: count, adapters: adapters), slowest: demand,
            link: link, paths: [demand.path.rawValue: count], assumes: expected.assumes)
    }
}
