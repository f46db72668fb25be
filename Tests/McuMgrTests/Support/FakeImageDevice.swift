import SMP
import CBOR

/// A small scripted McuMgr device for the client's tests: it reassembles writes
/// (or insists on one frame per write), answers params, image state, upload and
/// reset like a Zephyr server, and swaps its slots on reset. Errors come back as
/// `err` for v2 requests and `rc` for v1 ones.
struct FakeImageDevice {
    struct Slot: Equatable {
        var bytes: [UInt8]
        var hash: [UInt8]
        var version: String
    }

    /// Images the device can recognise by content (it cannot compute MCUboot hashes here).
    var catalogue: [(bytes: [UInt8], hash: [UInt8], sha: [UInt8])] = []
    var bufferSize = 2475
    var bufferCount = 4
    var supportsParams = true
    var reassembles = true
    var writeLimit = 244

    var primary: Slot
    var secondary: Slot?
    var primaryConfirmed = true
    var pendingTest = false
    var pendingPermanent = false
    /// A tested image runs; the old image waits in slot 1, confirmed, to come back.
    var revertible = false

    // Upload session (lost on reset).
    var uploadLength: Int?
    var uploadSHA: [UInt8]?
    var uploadOffset = 0
    var uploadBuffer: [UInt8] = []

    /// Scripted refusals: called for each request; a non-nil result is sent instead of the answer.
    var refuse: (SMPHeader, Int) -> SMPErrorResponse? = { _, _ in nil }
    /// Upload frames (by index) the device never receives, as if lost on air.
    var lostUploadFrames: Set<Int> = []
    /// The device stops taking image data at this offset: it answers every later chunk with it.
    var stuckAt: Int?

    // What the device saw.
    /// The new image fails to boot: MCUboot reverts to the old one during the swap.
    var bootFails = false

    private(set) var requests: [SMPHeader] = []
    private(set) var uploads: [ImageUploadRequest] = []
    private(set) var uploadFrames = 0
    private(set) var reassemblyViolations = 0
    private(set) var resets = 0
    private var partial: [UInt8] = []

    init(primary: Slot) { self.primary = primary }

    /// Takes one write; returns the encoded answers it completes and whether the device resets after them.
    mutating func receive(write: [UInt8]) -> (answers: [[UInt8]], resets: Bool) {
        if write.count > writeLimit { reassemblyViolations += 1 }
        if !reassembles {
            guard let frame = try? SMPFrame(bytes: write) else {
                reassemblyViolations += 1
                return ([], false)
            }
            return answer(frame)
        }
        partial += write
        guard partial.count >= 8, let header = try? SMPHeader(bytes: partial) else { return ([], false) }
        let total = 8 + Int(header.length)
        if total > bufferSize || partial.count > total {
            reassemblyViolations += 1
            partial = []
            return ([], false)
        }
        guard partial.count == total else { return ([], false) }
        defer { partial = [] }
        guard let frame = try? SMPFrame(bytes: partial) else { return ([], false) }
        return answer(frame)
    }

    /// The link dropped: a half-received frame is gone.
    mutating func linkLost() { partial = [] }

    private mutating func answer(_ frame: SMPFrame) -> (answers: [[UInt8]], resets: Bool) {
        let h = frame.header
        if h.group == ImageUploadRequest.group, h.command == ImageUploadRequest.command {
            defer { uploadFrames += 1 }
            if lostUploadFrames.contains(uploadFrames) { return ([], false) }
        }
        requests.append(h)
        if let error = refuse(h, requests.count - 1) { return ([encode(error: error, to: h)], false) }
        do {
            switch (h.group, h.command) {
            case (.os, MCUmgrParametersRequest.command) where supportsParams:
                return (
                    [encode(MCUmgrParametersResponse(bufferSize: bufferSize, bufferCount: bufferCount), to: h)], false
                )
            case (.os, ResetRequest.command):
                _ = try frame.request(as: ResetRequest.self)
                return ([encode(ResetResponse(), to: h)], true)
            case (.image, ImageStateReadRequest.command) where h.operation == .read:
                return ([encode(ImageStateResponse(images: slots), to: h)], false)
            case (.image, ImageStateWriteRequest.command):
                return ([try stateWrite(frame.request(as: ImageStateWriteRequest.self), header: h)], false)
            case (.image, ImageUploadRequest.command):
                let request = try frame.request(as: ImageUploadRequest.self)
                uploads.append(request)
                return ([upload(request, header: h)], false)
            default:
                return ([encode(error: .returnCode(.notSupported), to: h)], false)
            }
        } catch {
            return ([encode(error: .returnCode(.invalidValue), to: h)], false)
        }
    }

    var slots: [ImageSlotState] {
        var list = [
            ImageSlotState(
                slot: 0, version: primary.version, hash: primary.hash, bootable: true,
                confirmed: primaryConfirmed, active: true)
        ]
        if let s = secondary {
            list.append(
                ImageSlotState(
                    slot: 1, version: s.version, hash: s.hash, bootable: true,
                    pending: pendingTest, confirmed: revertible, permanent: pendingPermanent))
        }
        return list
    }

    private mutating func stateWrite(_ request: ImageStateWriteRequest, header h: SMPHeader) -> [UInt8] {
        if request.confirm {
            if request.hash == nil || request.hash == primary.hash {
                primaryConfirmed = true
                revertible = false
            } else if request.hash == secondary?.hash {
                // Zephyr refuses to change a test already set (img_mgmt_set_next_boot_slot, type TEST).
                if pendingTest, !pendingPermanent { return encode(error: .group(.image(.imageAlreadyPending)), to: h) }
                pendingTest = true
                pendingPermanent = true
            } else {
                return encode(error: .group(.image(.hashNotFound)), to: h)
            }
        } else {
            guard let hash = request.hash, hash.count == 32 else {
                return encode(error: .group(.image(.invalidHash)), to: h)
            }
            if hash == primary.hash { return encode(error: .group(.image(.imageSettingTestToActiveDenied)), to: h) }
            guard hash == secondary?.hash else { return encode(error: .group(.image(.hashNotFound)), to: h) }
            pendingTest = true
        }
        return encode(ImageStateResponse(images: slots), to: h)
    }

    private mutating func upload(_ request: ImageUploadRequest, header h: SMPHeader) -> [UInt8] {
        if request.offset == 0 {
            guard let length = request.length else { return encode(error: .group(.image(.invalidLength)), to: h) }
            guard request.data.count >= 32 else { return encode(error: .group(.image(.invalidImageHeader)), to: h) }
            guard Array(request.data.prefix(4)) == [0x3D, 0xB8, 0xF3, 0x96] else {
                return encode(error: .group(.image(.invalidImageHeaderMagic)), to: h)
            }
            if pendingTest || revertible { return encode(error: .group(.image(.noFreeSlot)), to: h) }
            if uploadSHA != nil, request.sha == uploadSHA, uploadLength == length, uploadOffset > 0 {
                return encode(ImageUploadResponse(offset: uploadOffset), to: h)
            }
            uploadLength = length
            uploadSHA = request.sha
            uploadOffset = 0
            uploadBuffer = []
            secondary = nil
        }
        if let stuck = stuckAt, uploadOffset >= stuck {
            return encode(ImageUploadResponse(offset: uploadOffset), to: h)
        }
        guard let length = uploadLength, request.offset == uploadOffset else {
            return encode(ImageUploadResponse(offset: uploadOffset), to: h)
        }
        guard request.offset + request.data.count <= length else {
            return encode(error: .group(.image(.invalidImageDataOverrun)), to: h)
        }
        uploadBuffer += request.data
        uploadOffset += request.data.count
        guard uploadOffset == length else { return encode(ImageUploadResponse(offset: uploadOffset), to: h) }
        let known = catalogue.first { $0.bytes == uploadBuffer }
        secondary = Slot(bytes: uploadBuffer, hash: known?.hash ?? Array(repeating: 0xEE, count: 32), version: "2.0.0")
        let match = known != nil && known?.sha == uploadSHA
        uploadSHA = nil
        return encode(ImageUploadResponse(offset: uploadOffset, match: match), to: h)
    }

    /// The device resets: the upload session is lost and MCUboot swaps or reverts.
    mutating func reset() {
        resets += 1
        partial = []
        uploadSHA = nil
        uploadLength = nil
        uploadOffset = 0
        if pendingTest, bootFails {
            // The swap ran, the image did not boot, and MCUboot swapped back.
        } else if pendingTest, let s = secondary {
            let old = primary
            primary = s
            secondary = old
            primaryConfirmed = pendingPermanent
            revertible = !pendingPermanent
        } else if revertible, let s = secondary {
            secondary = primary
            primary = s
            primaryConfirmed = true
            revertible = false
        }
        pendingTest = false
        pendingPermanent = false
    }

    private func encode<R: SMPResponse>(_ response: R, to h: SMPHeader) -> [UInt8] {
        (try? SMPFrame(response: response, to: h).encoded()) ?? []
    }

    private func encode(error: SMPErrorResponse, to h: SMPHeader) -> [UInt8] {
        var error = error
        if h.version == .v1, case let .group(g) = error { error = .returnCode(g.legacyReturnCode) }
        return (try? SMPFrame(error: error, to: h).encoded()) ?? []
    }
}
