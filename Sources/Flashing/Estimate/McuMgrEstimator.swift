import LinkModel
import McuMgr
import SMP

/// Estimates a full update over McuMgr: the upload in frames of the board's `buf_size`
/// (reassembly) or of one write each, pipelined `buf_count − 1` deep, the board erasing its
/// slot progressively and writing each chunk; then test, reset, MCUboot's swap, the
/// reconnection, confirm and the final state read.
///
/// The upload is stepped event by event on the link model: each event the central sends up
/// to `packetsPerEvent` link-layer packets of the frames the pipeline allows; a frame is
/// handled once its last packet arrived, after the frames before it (erase of each new page,
/// word writes, request handling); its answer leaves in the first event after that, and the
/// freed place in the pipeline is used in the next event.
public struct McuMgrEstimator: PathEstimator {
    public var path: EstimatedPath { .mcumgr }
    /// Bytes of the MCUboot image to upload.
    public var imageBytes: Int
    /// Bytes of the image in the primary slot now, when known (the swap covers the larger one).
    public var previousImageBytes: Int?
    /// `buf_size` and `buf_count` from the board's mcumgr parameters; nil when not read yet.
    public var bufferSize: Int?
    public var bufferCount: Int?
    /// The upgrade's options (pipeline depth, reassembly, mode, how long it waits after reset).
    public var options: McuMgrUpgradeOptions
    /// Whether the session reads the restarted board back over partial flashing (STATUS and
    /// REGION_INFO 1 and 2 on the same connection: a file with a MakeCode program).
    public var readsBack = false

    /// What a Zephyr SMP server over BLE offers when its parameters have not been read
    /// (the nRF Connect SDK Bluetooth overlay's `buf_size` 2475 with 4 buffers).
    public static let assumedBuffers = (size: 2475, count: 4)

    public init(
        imageBytes: Int, previousImageBytes: Int? = nil, bufferSize: Int? = nil, bufferCount: Int? = nil,
        options: McuMgrUpgradeOptions = McuMgrUpgradeOptions()
    ) {
        self.imageBytes = max(imageBytes, 0)
        self.previousImageBytes = previousImageBytes
        self.bufferSize = bufferSize
        self.bufferCount = bufferCount
        self.options = options
    }

    /// The name of the connection to the new image after the reset.
    static let reconnectPart = "reconnect"

    /// Round trips after the upload for the upgrade mode (test, reset, confirm, final state read).
    var roundTripsAfterUpload: Int {
        switch options.mode {
        case .testAndConfirm: return 4
        case .confirmOnly, .testOnly: return 3
        case .uploadOnly: return 2
        }
    }

    public func estimate(_ context: EstimateContext) -> PathEstimate {
        let profile = context.link.profile
        let ci = max(profile.connectionIntervalMicroseconds, 1)
        let board = context.board
        var assumptions: [String] = []
        if bufferSize == nil || bufferCount == nil {
            assumptions.append(
                "McuMgr buffers assumed \(Self.assumedBuffers.count) × \(Self.assumedBuffers.size) bytes "
                    + "(the board's parameters are read when the upload starts)")
        }
        let upload = uploadSchedule(profile: profile, board: board)
        let roundTrip = Duration.microseconds(2 * ci)
        let swap = board.swap(bytes: max(imageBytes, previousImageBytes ?? 0))
        let boardBack = board.resetDelay + board.timing.reboot + swap
        let parts: [PathEstimate.Part] =
            [
                context.beforeDecision,
                .init(name: "parameters and state read", duration: roundTrip * 2),
                .init(name: "upload", duration: upload.time),
                .init(name: "test and reset", duration: roundTrip * 2),
                .init(name: "reset, reboot and swap", duration: max(boardBack, options.estimatedSwapTime)),
                .init(name: Self.reconnectPart, duration: profile.connectionSetup),
                .init(name: "confirm and verify", duration: roundTrip * (roundTripsAfterUpload - 2))
            ] + (readsBack ? [.init(name: "read back the program", duration: roundTrip)] : [])
        return PathEstimate(
            path: .mcumgr, parts: parts,
            counts: [
                "bytes": imageBytes, "frames": upload.frames, "frameBytes": upload.frameSize,
                "pipelineDepth": upload.depth, "pages": board.pages(imageBytes)
            ],
            assumptions: assumptions)
    }

    /// The upload's frames and its time on the link model.
    func uploadSchedule(profile: LinkProfile, board: BoardCosts) -> (
        time: Duration, frames: Int, frameSize: Int, depth: Int, air: Duration
    ) {
        let mtu = min(profile.attMTU, 247)
        let writeSize = max(mtu - 3, 20)
        let size = bufferSize ?? Self.assumedBuffers.size
        let count = bufferCount ?? Self.assumedBuffers.count
        let frameLimit = options.useReassembly && size > 0 ? size : (size > 0 ? min(writeSize, size) : writeSize)
        let limit: SMPFrameLimit =
            options.useReassembly ? .reassemblyBuffer(frameLimit) : .attMTU(min(mtu, frameLimit + 3))
        let depth = options.pipelineDepth ?? max(count - 1, 1)
        let template = ImageUploadRequest(offset: 100_000, data: [])
        let perFrame = max(
            (try? UploadChunking.maximumDataLength(
                fitting: limit, template: template,
                alignment: options.byteAlignment)) ?? 1, 1)
        let overhead = limit.maximumFrameSize - perFrame
        // Each frame: its writes (the first of MTU − 3 bytes, the others one byte shorter, as
        // `SMPChannel` cuts them), each in link-layer packets of the data length.
        // The air time of its writes and of its answer (`{"rc":0,"off":…}`, about 22 bytes).
        var air: Int64 = 0
        func packets(frameBytes: Int) -> Int {
            var left = frameBytes, n = 0
            while left > 0 {
                let w = min(left, left == frameBytes || writeSize <= 20 ? writeSize : writeSize - 1)
                n += AirTime.fragments(bytes: AirTime.writePDU(value: w), dataLength: profile.dataLength).count
                air += ExchangeAir.write(w, dataLength: profile.dataLength)
                left -= w
            }
            air += ExchangeAir.answer(22, dataLength: profile.dataLength)
            return n
        }
        var frames: [(packets: Int, work: Int64)] = []
        var offset = 0, erasedUpTo = 0
        let page = board.pageSize
        while offset < imageBytes {
            let data = min(perFrame, imageBytes - offset)
            let end = offset + data
            var work =
                board.smpCommandTime.wholeMicroseconds + (board.timing.wordWrite * ((data + 3) / 4)).wholeMicroseconds
            while erasedUpTo < end {
                work += board.timing.pageErase.wholeMicroseconds
                erasedUpTo += page
            }
            frames.append((packets(frameBytes: data + overhead), work))
            offset = end
        }
        let time = Self.stepUpload(
            frames, ci: ci(profile), packetsPerEvent: max(profile.packetsPerEvent, 1), depth: depth)
        return (.microseconds(time), frames.count, limit.maximumFrameSize, depth, .microseconds(air))
    }

    private func ci(_ p: LinkProfile) -> Int64 { max(p.connectionIntervalMicroseconds, 1) }

    /// Steps the pipelined upload event by event; returns µs from the first request's release
    /// until the last answer arrives.
    static func stepUpload(_ frames: [(packets: Int, work: Int64)], ci: Int64, packetsPerEvent: Int, depth: Int)
        -> Int64
    {
        guard !frames.isEmpty else { return 0 }
        var released = min(depth, frames.count)  // frames the client has handed to the link
        var sending = 0  // the frame whose packets go out now
        var leftInFrame = frames[0].packets
        var deviceFree: Int64 = 0
        var answersReady: [Int64] = []  // when each handled frame's answer is ready
        var answered = 0
        var event: Int64 = 0
        var freedThisEvent = 0
        while answered < frames.count {
            event += ci
            // The client writes the frames freed by the previous event's answers now.
            released = min(released + freedThisEvent, frames.count)
            freedThisEvent = 0
            // Answers ready before this event leave in it.
            while answered < answersReady.count, answersReady[answered] < event {
                answered += 1
                freedThisEvent += 1
            }
            // The central's packets.
            var budget = packetsPerEvent
            while budget > 0, sending < released {
                let n = min(budget, leftInFrame)
                budget -= n
                leftInFrame -= n
                if leftInFrame == 0 {
                    let start = max(event, deviceFree)
                    deviceFree = start + frames[sending].work
                    answersReady.append(deviceFree)
                    sending += 1
                    if sending < frames.count { leftInFrame = frames[sending].packets }
                }
            }
        }
        return event
    }
}
