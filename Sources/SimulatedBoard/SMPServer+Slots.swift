import LinkModel
import SMP

/// Upload into the secondary slot, and MCUboot's swap at reset.
extension SMPServer {
    /// One upload chunk, with Zephyr's checks (`img_mgmt_upload`, mcumgr-smp.md §3.1).
    mutating func receiveChunk(_ request: ImageUploadRequest, effects: inout ServiceEffects, work: inout Duration) -> Answer {
        if let image = request.image, image != 0 { return .error(.group(.image(.invalidSlot))) }
        if request.offset == 0 {
            guard let length = request.length else { return .error(.group(.image(.invalidLength))) }
            guard request.data.count >= 32 else { return .error(.group(.image(.invalidImageHeader))) }
            guard Array(request.data.prefix(4)) == [0x3D, 0xB8, 0xF3, 0x96] else {
                return .error(.group(.image(.invalidImageHeaderMagic)))
            }
            if let sha = request.sha, sha.count > 32 { return .error(.group(.image(.invalidHash))) }
            guard !pendingTest, !revertible else { return .error(.group(.image(.noFreeSlot))) }
            guard length <= secondary.count else { return .error(.group(.image(.invalidImageTooLarge))) }
            if let current = upload, current.offset > 0, current.length == length, let sha = request.sha, sha == current.sha {
                // The same session (same `sha`): continue where it stands.
                return .ok(ImageUploadResponse(offset: current.offset).payload)
            }
            upload = UploadState(length: length, sha: request.sha, offset: 0)
            erasedPages = 0
        }
        guard var session = upload, request.offset == session.offset else {
            // Not the expected offset: drop the data and say where to continue.
            return .ok(ImageUploadResponse(offset: upload?.offset ?? 0).payload)
        }
        guard request.offset + request.data.count <= session.length else {
            return .error(.group(.image(.invalidImageDataOverrun)))
        }
        let end = request.offset + request.data.count
        // Progressive erase: every page this chunk reaches for the first time.
        let page = Int(configuration.pageSize)
        let pagesNeeded = (end + page - 1) / page
        while erasedPages < pagesNeeded {
            let start = erasedPages * page
            secondary.replaceSubrange(start..<min(start + page, secondary.count), with: repeatElement(0xFF, count: min(page, secondary.count - start)))
            work += effects.pageEraseDuration()
            statistics.secondaryPageErases += 1
            erasedPages += 1
        }
        secondary.replaceSubrange(request.offset..<end, with: request.data)
        work += effects.timing.wordWrite * ((request.data.count + 3) / 4)
        session.offset = end
        guard end == session.length else {
            upload = session
            return .ok(ImageUploadResponse(offset: end).payload)
        }
        // The last chunk: compare the slot with `sha` and close the session.
        upload = nil
        erasedPages = 0
        let match = session.sha.map { secondaryDigest(session.length).starts(with: $0) && !$0.isEmpty }
        return .ok(ImageUploadResponse(offset: end, match: match).payload)
    }

    /// What MCUboot will do at the next reset, and over how many pages.
    func bootloaderPlan(device: DeviceState) -> (what: String, pages: Int, swapping: Bool) {
        let swapping = pendingTest && secondaryImage?.intact == true
        guard swapping || revertible else { return ("boots the primary image", 0, false) }
        let page = Int(configuration.pageSize)
        let size = max(primaryImage(device: device)?.totalSize ?? 0, secondaryImage?.totalSize ?? 0)
        let pages = min((size + page - 1) / page, secondary.count / page)
        return (swapping ? "swaps \(pages) pages" : "reverts \(pages) pages", pages, swapping)
    }

    /// The modelled swap time at a reset now (`SMPServerConfiguration.swapDuration`).
    public func bootloaderTime(device: DeviceState, timing: DeviceTiming) -> Duration {
        configuration.swapDuration(pages: bootloaderPlan(device: device).pages, pageErase: timing.pageErase,
                                   wordWrite: timing.wordWrite)
    }

    /// MCUboot at a reset (any reset, a fault's included): swaps in a pending image, reverts
    /// an unconfirmed one, or leaves the slots alone. Both slots' flash change page by page.
    public mutating func runBootloader(device: inout DeviceState) {
        upload = nil
        erasedPages = 0
        let plan = bootloaderPlan(device: device)
        defer {
            pendingTest = false
            pendingPermanent = false
        }
        if pendingTest, let image = secondaryImage, !image.intact {
            // MCUboot's validation of the upgrade image fails: it erases the slot and boots the old image.
            secondary = [UInt8](repeating: 0xFF, count: secondary.count)
            statistics.rejectedImages += 1
        }
        guard plan.pages > 0 else { return }
        let page = Int(configuration.pageSize)
        let base = configuration.primarySlotStart
        for p in 0..<plan.pages {
            let address = base + UInt32(p * page)
            let internalPage = (try? device.flash.read(address..<(address + UInt32(page)))) ?? []
            let externalPage = Array(secondary[(p * page)..<((p + 1) * page)])
            try? device.flash.erasePage(at: address)
            try? device.flash.writeWords(externalPage, at: address)
            if internalPage.count == page { secondary.replaceSubrange((p * page)..<((p + 1) * page), with: internalPage) }
        }
        // The swap touches only the slots: the runtime's key-value page, with any
        // `flashIncomplete`, stays as it was (boards-storage-and-updates.md §4). The runtime now
        // in the primary slot has its own `FLASH_PROGRAM_END`, from which its memory map scans.
        device.applicationSwapped()
        if plan.swapping {
            statistics.swaps += 1
            primaryConfirmed = pendingPermanent
        } else {
            statistics.reverts += 1
            primaryConfirmed = true
        }
    }
}
