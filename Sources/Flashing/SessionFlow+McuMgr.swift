import McuMgr

/// What the session knows of the McuMgr path before it takes it: the board's slot and whether
/// the image can be installed there at all.
extension SessionFlow {
    /// The board's slot for the McuMgr image: as the options give it (a caller that knows the
    /// board), else the board profile's.
    var mcuMgrSlot: SlotSize { options.mcumgr.slotSize ?? .profile(plan.family) }

    /// Why the McuMgr image cannot be installed on this board (damaged, or larger than its slot).
    var mcuMgrImageProblem: McuMgrImageProblem? { plan.fullImage?.problem(slot: mcuMgrSlot) }

    /// The full paths the board offers that the decision leaves out, with the reason.
    var excludedFullPaths: [ExcludedPath] {
        guard hasMcuMgr, options.fullPath != .nordic, plan.fullImage != nil, let problem = mcuMgrImageProblem else {
            return []
        }
        return [ExcludedPath(path: .mcumgr, reason: "the image cannot be installed: \(problem)")]
    }
}
