import FirmwareImage
import Flashing
import LinkModel

/// The class's estimate shown before several boards are flashed (`ClassEstimator`).
extension FlashCommand {
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

    /// The class's estimate for `count` boards alike flashed with `plan` through `adapters` over
    /// `link`; nil for one board, or when the expected path cannot be estimated.
    static func classPreview(
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
