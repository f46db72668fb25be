import SMP

/// What the device's slot list means for the upgrade (docs/protocols/mcumgr-smp.md §4.2).
enum ValidateDecision: Equatable, Sendable {
    /// The image already runs as the mode wants it: nothing to send.
    case alreadyInstalled
    /// Upload the image.
    case upload
    /// The device already holds the image; continue with the step after the upload.
    case skipUpload(then: NextStep)
    /// Another image under test runs while the old one waits confirmed in slot 1:
    /// confirm the running image (hash, or nil for "the running one"), then validate again.
    case confirmPrimary(hash: [UInt8]?)
    /// Another image is pending in slot 1: reset so the device installs it, then validate again.
    case resetForPendingImage
    case fail(McuMgrError)

    /// The step that follows.
    enum NextStep: Equatable, Sendable { case test, confirm, reset, confirmAfterSwap }

    /// Decides from the device's `slots` for `image` with the upgrade `mode`.
    static func decide(slots: [ImageSlotState], image: McuMgrUpgradeImage, mode: McuMgrUpgradeMode) -> ValidateDecision
    {
        // No readable image at all (for example a primary slot whose TLVs a partial flash
        // overwrote): the secondary slot is free, so the upload is the way out.
        guard !slots.isEmpty else { return .upload }
        let ours = slots.filter { ($0.image ?? 0) == image.imageNumber }
        if let found = ours.first(where: { $0.hash == image.hash }) {
            if found.slot == 0, found.active {
                if found.confirmed { return .alreadyInstalled }
                // Running under test: confirming is all that is left.
                switch mode {
                case .testAndConfirm, .confirmOnly: return .skipUpload(then: .confirmAfterSwap)
                case .testOnly, .uploadOnly: return .alreadyInstalled
                }
            }
            if found.slot == 1 {
                if found.permanent {
                    return mode == .testOnly ? .fail(.alreadyConfirmedCannotTest) : .skipUpload(then: .reset)
                }
                if found.pending { return .skipUpload(then: mode == .confirmOnly ? .confirm : .reset) }
                // A leftover of an interrupted or failed upload: the device reports the hash
                // from the image's TLV without checking the data, so it is sent again.
                return .upload
            }
        }
        if let secondary = ours.first(where: { $0.slot == 1 }), !secondary.active {
            if secondary.confirmed {
                return .confirmPrimary(hash: ours.first(where: { $0.slot == 0 })?.hash)
            }
            if secondary.pending { return .resetForPendingImage }
        }
        return .upload
    }

    /// The step after the upload in `mode`.
    static func afterUpload(_ mode: McuMgrUpgradeMode) -> NextStep {
        switch mode {
        case .testAndConfirm, .testOnly: return .test
        case .confirmOnly: return .confirm
        case .uploadOnly: return .reset
        }
    }

    /// What the final state read must show: our image in slot 0, running, and
    /// confirmed when the mode confirms; for upload only, our image anywhere.
    static func verify(slots: [ImageSlotState], image: McuMgrUpgradeImage, mode: McuMgrUpgradeMode) -> Bool {
        let ours = slots.filter { ($0.image ?? 0) == image.imageNumber && $0.hash == image.hash }
        switch mode {
        case .uploadOnly: return !ours.isEmpty
        case .testOnly: return ours.contains { $0.slot == 0 && $0.active }
        case .testAndConfirm, .confirmOnly: return ours.contains { $0.slot == 0 && $0.active && $0.confirmed }
        }
    }
}
