import CBOR
import SMP

/// The OS and image group commands.
extension SMPServer {
    /// Handles one request: changes the state, adds the device time it takes to `work`,
    /// and returns the answer and whether the board resets after sending it.
    mutating func handle(
        _ frame: SMPFrame, device: inout DeviceState, effects: inout ServiceEffects,
        work: inout Duration
    ) -> (Answer, Bool) {
        let h = frame.header
        guard h.operation == .read || h.operation == .write, frame.payload.mapValue != nil else {
            return (.error(.returnCode(.invalidValue)), false)
        }
        do throws(SMPError) {
            switch (h.group, h.command, h.operation) {
            case (.os, EchoRequest.command, _):
                let echo = try EchoRequest(payload: frame.payload)
                return (.ok(EchoResponse(text: echo.text).payload), false)
            case (.os, ResetRequest.command, .write):
                _ = try frame.request(as: ResetRequest.self)
                return (.ok(ResetResponse().payload), true)
            case (.os, MCUmgrParametersRequest.command, .read):
                let params = MCUmgrParametersResponse(
                    bufferSize: configuration.bufferSize, bufferCount: configuration.bufferCount)
                return (.ok(params.payload), false)
            case (.os, BootloaderInfoRequest.command, .read):
                let query = try frame.request(as: BootloaderInfoRequest.self).query
                switch query {
                case nil: return (.ok(BootloaderInfoResponse(bootloader: "MCUboot").payload), false)
                case "mode"?: return (.ok(BootloaderInfoResponse(mode: 3, noDowngrade: false).payload), false)
                default: return (.error(.group(.os(.queryYieldsNoAnswer))), false)
                }
            case (.image, ImageStateReadRequest.command, .read):
                return (.ok(stateResponse(device: device)), false)
            case (.image, ImageStateWriteRequest.command, .write):
                return (
                    stateWrite(try frame.request(as: ImageStateWriteRequest.self), device: device, effects: &effects),
                    false
                )
            case (.image, ImageUploadRequest.command, .write):
                // `img_mgmt_upload_inspect`: a request without `off` is refused INVALID_OFFSET.
                guard frame.payload["off"] != nil else { return (.error(.group(.image(.invalidOffset))), false) }
                return (
                    receiveChunk(
                        try frame.request(as: ImageUploadRequest.self), effects: &effects, work: &work, device: device),
                    false
                )
            case (.image, ImageEraseRequest.command, .write):
                return (
                    erase(
                        try frame.request(as: ImageEraseRequest.self), device: device, effects: &effects, work: &work),
                    false
                )
            default:
                return (.error(.returnCode(.notSupported)), false)
            }
        } catch {
            return (.error(.returnCode(.invalidValue, reason: nil)), false)
        }
    }

    /// The primary slot's image, read from the chip's flash.
    func primaryImage(device: DeviceState) -> SlotImageInfo? {
        let base = configuration.primarySlotStart
        return SlotImageInfo(limit: Int(configuration.slotSize)) { offset, count in
            try? device.flash.read((base + UInt32(offset))..<(base + UInt32(offset + count)))
        }
    }

    /// The secondary slot's image, unless an upload is overwriting it.
    var secondaryImage: SlotImageInfo? {
        guard upload == nil, erasedPages == 0 else { return nil }
        return SlotImageInfo(limit: secondary.count) { offset, count in
            offset + count <= secondary.count ? Array(secondary[offset..<(offset + count)]) : nil
        }
    }

    /// A tested image runs and the old one waits in the secondary slot to come back.
    var revertible: Bool { !primaryConfirmed }

    /// MCUboot's swap type as Zephyr's `img_mgmt_get_next_boot_slot` reads it: the slot that
    /// boots next (0 the running one, 1 the other) and how.
    var nextBoot: (slot: Int, type: NextBootType) {
        if revertible { return (1, .revert) }
        if pendingTest { return (1, pendingPermanent ? .normal : .test) }
        return (0, .normal)
    }

    enum NextBootType { case normal, test, revert }

    /// The slot list, as Zephyr's `img_mgmt_state_read` reports it for a single-image build:
    /// slots in order, a slot without a readable image left out; the active slot `active` and
    /// `confirmed` unless it reverts; the other `pending`+`permanent`, `pending` or `confirmed`
    /// by the swap type; `bootable` from the header's flags.
    func slotStates(device: DeviceState) -> [ImageSlotState] {
        let next = nextBoot
        var list: [ImageSlotState] = []
        if let p = primaryImage(device: device) {
            list.append(
                ImageSlotState(
                    slot: 0, version: p.version, hash: p.hash, bootable: p.bootable,
                    confirmed: next.type != .revert, active: true))
        }
        if let s = secondaryImage {
            let other = next.slot == 1
            list.append(
                ImageSlotState(
                    slot: 1, version: s.version, hash: s.hash, bootable: s.bootable,
                    pending: other && next.type != .revert, confirmed: other && next.type == .revert,
                    permanent: other && next.type == .normal))
        }
        return list
    }

    /// The answer to a state read (and to a state write that took): the slots, then `splitStatus` 0.
    func stateResponse(device: DeviceState) -> CBOR {
        ImageStateResponse(images: slotStates(device: device), splitStatus: 0).payload
    }

    /// Zephyr's `img_mgmt_state_write` and `img_mgmt_set_next_boot_slot` (swap modes, one image).
    private mutating func stateWrite(
        _ request: ImageStateWriteRequest, device: DeviceState, effects: inout ServiceEffects
    ) -> Answer {
        let hash = request.hash ?? []
        let slot: Int
        if hash.isEmpty {
            // No hash: confirm the running image; a test needs a hash.
            guard request.confirm else { return .error(.group(.image(.invalidHash))) }
            slot = 0
        } else if hash.count != 32 {
            return .error(.group(.image(.invalidHash)))
        } else if hash == primaryImage(device: device)?.hash {
            slot = 0  // `img_mgmt_find_by_hash` looks at slot 0 first
        } else if hash == secondaryImage?.hash {
            slot = 1
        } else {
            return .error(.group(.image(.hashNotFound)))
        }
        let next = nextBoot
        if !request.confirm, slot == 0 { return .error(.group(.image(.imageSettingTestToActiveDenied))) }
        switch next.type {
        case .test:
            // Testing the slot already set for test changes nothing; anything else is refused.
            if !request.confirm, slot == next.slot { return .ok(stateResponse(device: device)) }
            return .error(.group(.image(.imageAlreadyPending)))
        case .normal:
            if request.confirm, slot == next.slot { return .ok(stateResponse(device: device)) }
            if (slot == 0 && next.slot != 0) || (!request.confirm && slot != 0 && slot == next.slot) {
                return .error(.group(.image(.imageAlreadyPending)))
            }
        case .revert:
            if request.confirm, slot == next.slot { return .ok(stateResponse(device: device)) }
            if !request.confirm { return .error(.group(.image(.imageAlreadyPending))) }
        }
        // `boot_set_next` writes the trailer.
        if configuration.failingTrailerWrites.contains(request.confirm ? .confirm : .test) {
            return .error(.group(.image(.flashWriteFailed)))
        }
        if slot == 0 {
            primaryConfirmed = true
        } else {
            pendingTest = true
            pendingPermanent = request.confirm
        }
        return .ok(stateResponse(device: device))
    }

    /// Zephyr's `img_mgmt_erase`: the slot (default the other one) is refused NO_FREE_SLOT when it
    /// holds a readable image that is in use; otherwise erased, and the upload session ends.
    private mutating func erase(
        _ request: ImageEraseRequest, device: DeviceState, effects: inout ServiceEffects,
        work: inout Duration
    ) -> Answer {
        let slot = request.slot ?? 1
        guard slot <= 1 else { return .error(.group(.image(.invalidSlot))) }
        let inUse = slot == 0 || revertible || (pendingTest && !configuration.allowErasePending)
        if inUse, (slot == 0 ? primaryImage(device: device) : secondaryImage) != nil {
            return .error(.group(.image(.noFreeSlot)))
        }
        // Zephyr would go on to erase a running slot whose image it cannot read; the simulated
        // board refuses that rather than erase the application it runs.
        guard slot == 1 else { return .error(.group(.image(.noFreeSlot))) }
        upload = nil
        let pages = secondary.count / Int(configuration.pageSize)
        if secondary.contains(where: { $0 != 0xFF }) {
            for _ in 0..<pages { work += effects.pageEraseDuration() }
            statistics.secondaryPageErases += pages
        }
        secondary = [UInt8](repeating: 0xFF, count: secondary.count)
        erasedPages = 0
        pendingTest = false
        pendingPermanent = false
        return .ok(ImageEraseResponse().payload)
    }
}
