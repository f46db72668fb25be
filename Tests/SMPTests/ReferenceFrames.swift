import CBOR
import SMP

/// The Swift side of `Fixtures/smp-frames.txt`: for each frame the Python `smp`
/// package wrote, the same message built with the Swift types, and a check that
/// the Python bytes decode to that message.
struct ReferenceFrame: Sendable, CustomStringConvertible {
    let name: String
    let frame: SMPFrame
    let decodesToSameMessage: @Sendable (SMPFrame) throws -> Bool
    var description: String { name }

    static func request<R: SMPRequest>(_ name: String, _ request: R, _ version: SMPVersion = .v2, seq: UInt8) -> Self {
        Self(name: name, frame: SMPFrame(request: request, version: version, sequence: seq)) {
            try $0.request(as: R.self) == request
        }
    }

    static func response<Q: SMPRequest>(
        _ name: String, _ response: Q.Response, to request: Q,
        _ version: SMPVersion = .v2, seq: UInt8
    ) -> Self {
        let header = SMPFrame(request: request, version: version, sequence: seq).header
        return Self(name: name, frame: SMPFrame(response: response, to: header)) {
            try $0.response(as: Q.Response.self) == response
        }
    }

    static func error<Q: SMPRequest>(
        _ name: String, _ error: SMPErrorResponse, to request: Q,
        _ version: SMPVersion, seq: UInt8
    ) -> Self {
        let header = SMPFrame(request: request, version: version, sequence: seq).header
        return Self(name: name, frame: SMPFrame(error: error, to: header)) { try $0.errorResponse() == error }
    }
}

extension ReferenceFrame {
    static let hashA: [UInt8] = Array(0x00..<0x20)
    static let hashB: [UInt8] = Array(0xA0..<0xC0)
    static let fileSHA: [UInt8] = Array(0x40..<0x60)

    static let slots = [
        ImageSlotState(slot: 0, version: "1.2.3", hash: hashA, bootable: true, confirmed: true, active: true),
        ImageSlotState(slot: 1, version: "1.3.0.7", hash: hashB, bootable: true, pending: true)
    ]

    static let all: [ReferenceFrame] = [
        .request("os-echo-request-v2", EchoRequest(text: "hi"), seq: 4),
        .request("os-echo-request-v1", EchoRequest(text: "hello, board \u{2713}"), .v1, seq: 5),
        .response("os-echo-response", EchoResponse(text: "hi"), to: EchoRequest(text: "hi"), seq: 4),
        .request("os-reset-request", ResetRequest(), seq: 5),
        .request("os-reset-force-request", ResetRequest(force: true), seq: 6),
        .response("os-reset-response", ResetResponse(), to: ResetRequest(), seq: 6),
        .request("os-params-request", MCUmgrParametersRequest(), seq: 6),
        .request("os-params-request-v1", MCUmgrParametersRequest(), .v1, seq: 255),
        .response(
            "os-params-response", MCUmgrParametersResponse(bufferSize: 2475, bufferCount: 4),
            to: MCUmgrParametersRequest(), seq: 6),
        .request("os-bootloader-info-request", BootloaderInfoRequest(), seq: 7),
        .request("os-bootloader-mode-request", BootloaderInfoRequest(query: "mode"), seq: 8),
        .response(
            "os-bootloader-info-response", BootloaderInfoResponse(bootloader: "MCUboot"),
            to: BootloaderInfoRequest(), seq: 7),
        .request("image-state-read-request", ImageStateReadRequest(), seq: 1),
        .request("image-state-read-request-v1", ImageStateReadRequest(), .v1, seq: 1),
        .response(
            "image-state-read-response", ImageStateResponse(images: slots, splitStatus: 0),
            to: ImageStateReadRequest(), seq: 1),
        .response(
            "image-state-read-response-multi-image",
            ImageStateResponse(images: [
                ImageSlotState(
                    image: 0, slot: 0, version: "2.0.0", hash: hashA, bootable: true, confirmed: true, active: true),
                ImageSlotState(
                    image: 1, slot: 0, version: "0.9.1", hash: hashB, bootable: true, confirmed: true, active: true)
            ]), to: ImageStateReadRequest(), seq: 2),
        .request("image-state-test-request", ImageStateWriteRequest.test(hash: hashB), seq: 2),
        .request("image-state-confirm-request", ImageStateWriteRequest.confirm(), seq: 3),
        .request("image-state-confirm-hash-request", ImageStateWriteRequest.confirm(hash: hashB), seq: 3),
        .pythonStateWriteResponse,
        .request(
            "image-upload-first-request",
            ImageUploadRequest.first(
                data: (0..<64).map { UInt8(($0 * 7) & 0xFF) }, imageLength: 70000,
                sha: fileSHA, image: 0, upgrade: false), seq: 10),
        .request(
            "image-upload-first-request-v1",
            ImageUploadRequest.first(data: Array(0..<32), imageLength: 300, sha: fileSHA), .v1, seq: 11),
        .request(
            "image-upload-next-request",
            ImageUploadRequest(offset: 4096, data: (0..<200).map { UInt8(($0 * 13) & 0xFF) }), seq: 12),
        .response(
            "image-upload-response", ImageUploadResponse(offset: 4096),
            to: ImageUploadRequest(offset: 4096, data: []), seq: 12),
        .response(
            "image-upload-final-response", ImageUploadResponse(offset: 70000, match: true),
            to: ImageUploadRequest(offset: 69000, data: []), seq: 13),
        .request("image-erase-request", ImageEraseRequest(slot: 1), seq: 14),
        .request("image-erase-default-request", ImageEraseRequest(), seq: 15),
        .response("image-erase-response", ImageEraseResponse(), to: ImageEraseRequest(slot: 1), seq: 14),
        .error("error-v1-busy", .returnCode(.busy), to: ImageUploadRequest(offset: 0, data: []), .v1, seq: 12),
        .error(
            "error-v1-notsup-with-reason", .returnCode(.notSupported, reason: "reset hook refused"),
            to: ResetRequest(), .v1, seq: 20),
        .error("error-v1-too-new", .returnCode(.unsupportedTooNew), to: ImageStateWriteRequest.confirm(), .v1, seq: 21),
        .error(
            "error-v2-smp-layer", .returnCode(.invalidValue), to: ImageUploadRequest(offset: 0, data: []), .v2, seq: 22),
        .error(
            "error-v2-no-free-slot", .group(.image(.noFreeSlot)), to: ImageUploadRequest(offset: 0, data: []), .v2,
            seq: 10),
        .error(
            "error-v2-test-active-denied", .group(.image(.imageSettingTestToActiveDenied)),
            to: ImageStateWriteRequest.test(hash: hashA), .v2, seq: 2),
        .error(
            "error-v2-os-query-no-answer", .group(.os(.queryYieldsNoAnswer)),
            to: BootloaderInfoRequest(query: "mode"), .v2, seq: 8)
    ]
}

extension ReferenceFrame {
    /// Python smp 4.2.0's `ImageStatesWriteResponse` subclasses the read response
    /// and so inherits its operation: its header says read-response (1) where
    /// Zephyr answers a write with write-response (3). The Swift frame copies
    /// Python's header here to compare bytes; `SMPFrame(response:to:)` would
    /// (correctly) write op 3, and `response(as:)` accepts either.
    static let pythonStateWriteResponse: ReferenceFrame = {
        let response = ImageStateResponse(images: [
            slots[0],
            ImageSlotState(slot: 1, version: "1.3.0.7", hash: hashB, bootable: true, pending: true, permanent: true)
        ])
        let frame = SMPFrame(
            version: .v2, operation: .readResponse, group: .image, command: 0, sequence: 2,
            payload: response.payload)
        return ReferenceFrame(name: "image-state-write-response", frame: frame) {
            try $0.response(as: ImageStateResponse.self) == response
        }
    }()
}
