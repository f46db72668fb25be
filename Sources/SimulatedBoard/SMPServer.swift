import CBOR
import Crypto
import SMP
import Transport

/// The McuMgr SMP server of a simulated board, as a Zephyr `smp_svr` build with MCUboot
/// answers over Bluetooth (docs/protocols/mcumgr-smp.md §2, §3; figures in `SMPServerConfiguration`):
/// SMP reassembly into `buf_size` buffers, `buf_count` buffers shared by requests and
/// responses, one request processed at a time in arrival order, the OS group (echo, reset,
/// mcumgr params, bootloader info) and the image group (state read/write, upload, erase),
/// progressive erase of the secondary slot, test/confirm/revert, and the MCUboot swap at reset.
/// Errors go back as `err` to v2 requests and as `rc` to v1 requests (the image group's codes
/// translated as `img_mgmt_translate_error_code` does). Answers are written as Zephyr's zcbor
/// writes them (indefinite-length maps, keys in Zephyr's order), without `rc` on success; the
/// image state of a single-image build has no `image` key and ends with `splitStatus` 0
/// (`img_mgmt_state.c`; `SMPServerConfiguration` has the build options).
public struct SMPServer: SimulatedService {
    public let uuid = SMPGATT.service
    public let characteristics: Set<GATTCharacteristic> = [SMPGATT.characteristic]
    public internal(set) var configuration: SMPServerConfiguration

    // Flash and MCUboot trailer state (survives resets).
    /// The secondary slot: external flash, 0xFF when erased.
    public internal(set) var secondary: [UInt8]
    /// The secondary image is marked for test (MCUboot "pending").
    public internal(set) var pendingTest = false
    /// The secondary image is marked permanent (confirmed for the next boot).
    public internal(set) var pendingPermanent = false
    /// The primary image is confirmed; false while a tested image runs (it reverts on reset).
    public internal(set) var primaryConfirmed = true

    // RAM state (lost on reset).
    var partial: [UInt8] = []
    var waiting: [SMPFrame] = []
    var processing: Processing?
    var upload: UploadState?
    /// Secondary pages erased by the running upload, counted from the slot start.
    var erasedPages = 0

    /// What the server saw since the board was made (not reset by reboots).
    public internal(set) var statistics = SMPServerStatistics()

    struct Processing: Sendable {
        var response: [UInt8]
        var resetsAfter: Bool
    }

    /// The answer to one request.
    enum Answer: Sendable {
        case ok(CBOR)
        case error(SMPErrorResponse)
    }

    struct UploadState: Sendable {
        var length: Int
        /// The first chunk's `sha`, as sent (empty when it had none).
        var sha: [UInt8]
        var offset: Int
    }

    static let responseTag = 1
    static let resetTag = 2

    public init(configuration: SMPServerConfiguration) {
        self.configuration = configuration
        secondary = [UInt8](repeating: 0xFF, count: Int(configuration.slotSize))
    }

    public mutating func didBoot(device: DeviceState) {
        partial = []
        waiting = []
        processing = nil
        upload = nil
        erasedPages = 0
    }

    /// Zephyr drops a half-reassembled frame when the link drops (or notifications go off).
    public mutating func didDisconnect() {
        partial = []
    }

    /// Buffers in use: queued frames, the one in reassembly, and the request being
    /// processed with its response.
    var buffersInUse: Int { waiting.count + (partial.isEmpty ? 0 : 1) + (processing == nil ? 0 : 2) }

    public mutating func didWrite(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
        device: inout DeviceState, effects: inout ServiceEffects
    ) {
        statistics.writes += 1
        if partial.isEmpty {
            guard bytes.count >= SMPHeader.size, buffersInUse < configuration.bufferCount else {
                statistics.refusedWrites += 1
                effects.note(
                    "SMP: write of \(bytes.count) bytes refused (\(bytes.count < SMPHeader.size ? "no header" : "no free buffer"))"
                )
                return
            }
        }
        // The first write of a frame holds the whole header (Zephyr's reassembly rule).
        let head = partial.isEmpty ? bytes : partial
        let expected = SMPHeader.size + (Int(head[2]) << 8 | Int(head[3]))
        guard expected <= configuration.bufferSize, partial.count + bytes.count <= expected else {
            statistics.refusedWrites += 1
            effects.note(
                "SMP: write refused, the frame would exceed \(expected > configuration.bufferSize ? "buf_size" : "its length"); partial frame dropped"
            )
            partial = []
            return
        }
        partial += bytes
        guard partial.count == expected else { return }
        let frameBytes = partial
        partial = []
        let frame: SMPFrame
        if let decoded = try? SMPFrame(bytes: frameBytes) {
            frame = decoded
        } else if let header = try? SMPHeader(bytes: frameBytes) {
            // A valid header with a payload that is not CBOR: answered EINVAL, as Zephyr does.
            frame = SMPFrame(header: header, payload: .null)
        } else {
            statistics.refusedWrites += 1
            effects.note("SMP: frame with a malformed header dropped")
            return
        }
        statistics.frames += 1
        waiting.append(frame)
        startNext(device: &device, effects: &effects)
    }

    public mutating func workDone(tag: Int, device: inout DeviceState, effects: inout ServiceEffects) {
        switch tag {
        case Self.responseTag:
            guard let done = processing else { return }
            processing = nil
            var start = 0
            while start < done.response.count {
                let end = min(done.response.count, start + max(configuration.notificationSize, 20))
                effects.notify(SMPGATT.characteristic, Array(done.response[start..<end]))
                start = end
            }
            if done.resetsAfter {
                effects.schedule(after: configuration.resetDelay, tag: Self.resetTag)
            } else {
                startNext(device: &device, effects: &effects)
            }
        case Self.resetTag:
            statistics.resets += 1
            effects.note(
                "SMP: reset; MCUboot \(bootloaderPlan(device: device).what) in \(bootloaderTime(device: device, timing: effects.timing))"
            )
            effects.requestReboot()
        default:
            return
        }
    }

    /// Takes the next queued request: handles it now and answers when its work is done.
    private mutating func startNext(device: inout DeviceState, effects: inout ServiceEffects) {
        guard processing == nil, !waiting.isEmpty else { return }
        let frame = waiting.removeFirst()
        var work = configuration.commandTime
        var (answer, resets) = (Answer.error(.returnCode(.busy)), false)
        if frame.header.version.rawValue > SMPVersion.v2.rawValue {
            // `smp_handle_single_req`: a version above 2 is answered MGMT_ERR_UNSUPPORTED_TOO_NEW in a v2 header.
            answer = .error(.returnCode(.unsupportedTooNew))
        } else if effects.rng.chance(configuration.busyAnswerProbability) {
            statistics.injectedBusy += 1
        } else {
            (answer, resets) = handle(frame, device: &device, effects: &effects, work: &work)
        }
        let bytes: [UInt8]
        switch answer {
        case let .ok(payload):
            bytes =
                (try? SMPFrame(header: Self.responseHeader(to: frame.header), payload: payload).encoded(
                    configuration.payloadEncoding)) ?? []
        case let .error(error):
            var error = error
            if frame.header.version == .v1, case let .group(g) = error { error = .returnCode(g.legacyReturnCode) }
            statistics.errorsSent += 1
            bytes = (try? SMPFrame(error: error, to: frame.header).encoded(configuration.payloadEncoding)) ?? []
        }
        processing = Processing(response: bytes, resetsAfter: resets)
        effects.schedule(after: work, tag: Self.responseTag)
    }

    static func responseHeader(to request: SMPHeader) -> SMPHeader {
        SMPHeader(
            version: request.version, operation: request.operation.response, length: 0, group: request.group,
            sequence: request.sequence, command: request.command)
    }

    /// SHA-256 of the first `count` bytes of the secondary slot.
    func secondaryDigest(_ count: Int) -> [UInt8] {
        Array(SHA256.hash(data: secondary[0..<min(count, secondary.count)]))
    }
}

/// Counters of the SMP server.
public struct SMPServerStatistics: Sendable, Equatable {
    public var writes = 0
    /// Writes refused: no free buffer, a frame over `buf_size`, a write past the frame's end.
    public var refusedWrites = 0
    /// Complete frames taken.
    public var frames = 0
    public var errorsSent = 0
    public var secondaryPageErases = 0
    public var resets = 0
    /// Faults injected by the configuration's probabilities.
    public var injectedBusy = 0
    public var injectedFlashFailures = 0
    public var swaps = 0
    /// Pending images MCUboot refused to swap in because their hash did not match their data.
    public var rejectedImages = 0
    public var reverts = 0
}
