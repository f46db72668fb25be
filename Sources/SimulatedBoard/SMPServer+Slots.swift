import FirmwareImage
import LinkModel
import SMP

/// Upload into the secondary slot, and MCUboot's swap at reset.
extension SMPServer {
    /// One upload chunk, as Zephyr's `img_mgmt_upload` and `img_mgmt_upload_inspect` handle it
    /// (`img_mgmt.c`, `zephyr_img_mgmt.c`; docs/protocols/mcumgr-smp.md §3.1). `image` is ignored, as in a
    /// single-image build without direct upload. Any error ends the upload session.
    mutating func receiveChunk(
        _ request: ImageUploadRequest, effects: inout ServiceEffects, work: inout Duration,
        device: DeviceState
    ) -> Answer {
        let answer = inspectAndWrite(request, effects: &effects, work: &work, device: device)
        if case .error = answer {
            // `img_mgmt_reset_upload()`: the next chunk at another offset than 0 is answered `off` 0.
            upload = nil
            erasedPages = 0
        }
        return answer
    }

    private mutating func inspectAndWrite(
        _ request: ImageUploadRequest, effects: inout ServiceEffects, work: inout Duration,
        device: DeviceState
    ) -> Answer {
        if request.offset == 0 {
            guard request.data.count >= 32 else { return .error(.group(.image(.invalidImageHeader))) }
            guard let length = request.length else { return .error(.group(.image(.invalidLength))) }
            guard Array(request.data.prefix(4)) == [0x3D, 0xB8, 0xF3, 0x96] else {
                return .error(.group(.image(.invalidImageHeaderMagic)))
            }
            let sha = request.sha ?? []
            if sha.count > 32 { return .error(.group(.image(.invalidHash))) }
            if let current = upload, !sha.isEmpty, current.sha == sha {
                // The same session (same `sha`): continue where it stands.
                return .ok(ImageUploadResponse(offset: current.offset).payload)
            }
            // `img_mgmt_slot_in_use`: a slot MCUboot reverts to, or (without ALLOW_ERASE_PENDING) a pending one.
            guard !revertible, configuration.allowErasePending || !pendingTest else {
                return .error(.group(.image(.noFreeSlot)))
            }
            guard length <= secondary.count else { return .error(.group(.image(.invalidImageTooLarge))) }
            if request.upgrade == true, let running = primaryImage(device: device),
                let new = try? MCUbootHeader(decoding: Array(request.data.prefix(MCUbootHeader.encodedSize))),
                Self.compare(running.rawVersion, new.version) >= 0
            {
                return .error(.group(.image(.currentVersionIsNewer)))
            }
            upload = UploadState(length: length, sha: sha, offset: 0)
            erasedPages = 0
            if configuration.imageCheck, sha.count == 32, secondaryDigest(length) == sha {
                // The slot already holds these bytes: nothing to write.
                upload = nil
                return .ok(ImageUploadResponse(offset: length, match: true).payload)
            }
        }
        guard var session = upload, request.offset == session.offset else {
            // Not the expected offset: drop the data and say where to continue.
            return .ok(ImageUploadResponse(offset: upload?.offset ?? 0).payload)
        }
        guard request.offset + request.data.count <= session.length else {
            return .error(.group(.image(.invalidImageDataOverrun)))
        }
        guard !request.data.isEmpty else { return .ok(ImageUploadResponse(offset: session.offset).payload) }
        if effects.rng.chance(configuration.flashWriteFailureProbability) {
            statistics.injectedFlashFailures += 1
            return .error(.group(.image(.flashWriteFailed)))
        }
        let end = request.offset + request.data.count
        // Progressive erase: every page this chunk reaches for the first time.
        let page = Int(configuration.pageSize)
        let pagesNeeded = (end + page - 1) / page
        while erasedPages < pagesNeeded {
            let start = erasedPages * page
            secondary.replaceSubrange(
                start..<min(start + page, secondary.count),
                with: repeatElement(0xFF, count: min(page, secondary.count - start)))
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
        // The last chunk: the progressive erase erases the trailer's page at the end (flash_img.c
        // `flash_img_buffered_write`), and a pending mark goes with it. Then the slot is
        // compared with `sha`, zero-padded to 32 bytes as Zephyr keeps it, and the session closes.
        upload = nil
        erasedPages = 0
        pendingTest = false
        pendingPermanent = false
        guard configuration.imageCheck else { return .ok(ImageUploadResponse(offset: end).payload) }
        let padded = session.sha + [UInt8](repeating: 0, count: max(0, 32 - session.sha.count))
        return .ok(ImageUploadResponse(offset: end, match: secondaryDigest(session.length) == padded).payload)
    }

    /// Zephyr's `img_mgmt_vercmp` without the build number (`VERSION_CMP_USE_BUILD_NUMBER` is off by default).
    static func compare(_ a: MCUbootVersion, _ b: MCUbootVersion) -> Int {
        let x = [Int(a.major), Int(a.minor), Int(a.revision)], y = [Int(b.major), Int(b.minor), Int(b.revision)]
        return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
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
        configuration.swapDuration(
            pages: bootloaderPlan(device: device).pages, pageErase: timing.pageErase,
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
            if internalPage.count == page {
                secondary.replaceSubrange((p * page)..<((p + 1) * page), with: internalPage)
            }
        }
        // The swap touches only the slots: the runtime's key-value page, with any
        // `flashIncomplete`, stays as it was (docs/protocols/board-storage.md §4). The runtime now
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
