import CBOR
import SMP

/// The OS and image group commands.
extension SMPServer {
    /// Handles one request: changes the state, adds the device time it takes to `work`,
    /// and returns the answer and whether the board resets after sending it.
    mutating func handle(_ frame: SMPFrame, device: inout DeviceState, effects: inout ServiceEffects,
                         work: inout Duration) -> (Answer, Bool) {
        let h = frame.header
        guard h.operation == .read || h.operation == .write else { return (.error(.returnCode(.invalidValue)), false) }
        do throws(SMPError) {
            switch (h.group, h.command, h.operation) {
            case (.os, EchoRequest.command, _):
                let echo = try EchoRequest(payload: frame.payload)
                return (.ok(EchoResponse(text: echo.text).payload), false)
            case (.os, ResetRequest.command, .write):
                _ = try frame.request(as: ResetRequest.self)
                return (.ok(ResetResponse().payload), true)
            case (.os, MCUmgrParametersRequest.command, .read):
                let params = MCUmgrParametersResponse(bufferSize: configuration.bufferSize, bufferCount: configuration.bufferCount)
                return (.ok(params.payload), false)
            case (.os, BootloaderInfoRequest.command, .read):
                let query = try frame.request(as: BootloaderInfoRequest.self).query
                switch query {
                case nil: return (.ok(BootloaderInfoResponse(bootloader: "MCUboot").payload), false)
                case "mode"?: return (.ok(BootloaderInfoResponse(mode: 3, noDowngrade: false).payload), false)
                default: return (.error(.group(.os(.queryYieldsNoAnswer))), false)
                }
            case (.image, ImageStateReadRequest.command, .read):
                return (.ok(ImageStateResponse(images: slotStates(device: device)).payload), false)
            case (.image, ImageStateWriteRequest.command, .write):
                return (stateWrite(try frame.request(as: ImageStateWriteRequest.self), device: device), false)
            case (.image, ImageUploadRequest.command, .write):
                return (receiveChunk(try frame.request(as: ImageUploadRequest.self), effects: &effects, work: &work), false)
            case (.image, ImageEraseRequest.command, .write):
                return (erase(try frame.request(as: ImageEraseRequest.self), effects: &effects, work: &work), false)
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

    /// The slot list, as Zephyr's `img_mgmt_state_read` reports it.
    func slotStates(device: DeviceState) -> [ImageSlotState] {
        var list: [ImageSlotState] = []
        if let p = primaryImage(device: device) {
            list.append(ImageSlotState(image: 0, slot: 0, version: p.version, hash: p.hash, bootable: true,
                                       confirmed: primaryConfirmed, active: true))
        }
        if let s = secondaryImage {
            list.append(ImageSlotState(image: 0, slot: 1, version: s.version, hash: s.hash, bootable: true,
                                       pending: pendingTest, confirmed: revertible, permanent: pendingPermanent))
        }
        return list
    }

    private mutating func stateWrite(_ request: ImageStateWriteRequest, device: DeviceState) -> Answer {
        let primary = primaryImage(device: device), second = secondaryImage
        if request.confirm {
            if request.hash == nil || request.hash == primary?.hash {
                primaryConfirmed = true
            } else if let hash = request.hash, hash == second?.hash {
                guard !revertible else { return .error(.group(.image(.imageConfirmationDenied))) }
                pendingTest = true
                pendingPermanent = true
            } else {
                return .error(.group(.image(request.hash?.count == 32 ? .hashNotFound : .invalidHash)))
            }
        } else {
            guard let hash = request.hash, hash.count == 32 else { return .error(.group(.image(.invalidHash))) }
            if hash == primary?.hash { return .error(.group(.image(.imageSettingTestToActiveDenied))) }
            guard hash == second?.hash else { return .error(.group(.image(.hashNotFound))) }
            guard !revertible else { return .error(.group(.image(.imageAlreadyPending))) }
            pendingTest = true
        }
        return .ok(ImageStateResponse(images: slotStates(device: device)).payload)
    }

    private mutating func erase(_ request: ImageEraseRequest, effects: inout ServiceEffects, work: inout Duration) -> Answer {
        guard (request.slot ?? 1) == 1 else { return .error(.group(.image(.invalidSlot))) }
        guard !pendingTest, !revertible else { return .error(.group(.image(.imageAlreadyPending))) }
        upload = nil
        let pages = secondary.count / Int(configuration.pageSize)
        for _ in 0..<pages { work += effects.pageEraseDuration() }
        statistics.secondaryPageErases += pages
        secondary = [UInt8](repeating: 0xFF, count: secondary.count)
        erasedPages = 0
        return .ok(ImageEraseResponse().payload)
    }
}
