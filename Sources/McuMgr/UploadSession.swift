import SMP

/// The bookkeeping of one image upload: what the device has confirmed, what is
/// in flight, what to send next. Pure data; `McuMgrUpgrade` sends the requests.
///
/// Offsets are the device's: it answers every chunk with the number of bytes it
/// has written, which is the next offset it expects. A different number than
/// predicted means it dropped data; the session then stops sending, lets the
/// chunks in flight be answered, and continues from the last reported offset.
///
/// Progress is the device's offset passing the one it reported before; the retry budget of
/// the upload counts retries since then.
struct UploadSession: Sendable {
    /// One request in flight.
    struct Chunk: Sendable, Equatable {
        var sequence: UInt8
        var offset: Int
        var length: Int
        /// True when the request carried `len` and `sha` (the first chunk of a connection).
        var carriesSessionFields: Bool
    }

    /// What an answer meant.
    enum Answer: Equatable {
        /// An answer to a request no longer in flight (retried or from an old connection).
        case stale
        /// The device took the chunk as predicted.
        case progress
        /// The device reported another offset; sending pauses until the chunks in flight are answered.
        case resynchronising
        /// The device has every byte.
        case complete
    }

    let image: McuMgrUpgradeImage
    var total: Int { image.bytes.count }
    /// The offset the device last reported.
    private(set) var deviceOffset = 0
    /// The next offset to send.
    private(set) var nextOffset = 0
    /// The end of the furthest chunk ever sent.
    private(set) var highestSent = 0
    private(set) var inFlight: [Chunk] = []
    private(set) var resynchronising = false
    /// The next chunk carries `len` and `sha` (first chunk, or first after a reconnect).
    private(set) var needsSessionFields = true
    /// True when the last answer took the device's offset past the one it reported before.
    private(set) var advanced = false
    /// Retries charged since the device's offset last advanced.
    private(set) var retriesWithoutProgress = 0
    /// Request timeouts since the device's offset last advanced.
    private(set) var timeoutsWithoutProgress = 0

    private(set) var bytesSent = 0
    private(set) var chunksSent = 0
    private(set) var resentBytes = 0

    init(image: McuMgrUpgradeImage) { self.image = image }

    /// True when another chunk may go out with `depth` requests allowed in flight.
    /// A chunk that carries the session fields waits alone for its answer.
    func canSend(depth: Int) -> Bool {
        guard !resynchronising, nextOffset < total, inFlight.count < depth else { return false }
        return !(inFlight.first?.carriesSessionFields ?? false)
    }

    /// The request for the next chunk, as large as `limit` allows.
    func nextRequest(limit: SMPFrameLimit, alignment: Int) throws(SMPError) -> ImageUploadRequest {
        let offset = nextOffset
        var request = ImageUploadRequest(offset: offset, data: [])
        if needsSessionFields || offset == 0 {
            request.length = total
            request.sha = image.fileSHA256
            request.image = image.imageNumber > 0 ? image.imageNumber : nil
        }
        let room = try UploadChunking.maximumDataLength(fitting: limit, template: request, alignment: alignment)
        let remaining = total - offset
        // The device insists that the first chunk holds the whole 32-byte image header.
        if offset == 0, room < min(32, remaining) {
            throw .chunkDoesNotFit(frameLimit: limit.maximumFrameSize, overhead: limit.maximumFrameSize - room)
        }
        let length = min(room, remaining)
        request.data = Array(image.bytes[offset..<(offset + length)])
        return request
    }

    /// Records that `request` left with `sequence`.
    mutating func sent(_ request: ImageUploadRequest, sequence: UInt8) {
        let end = request.offset + request.data.count
        resentBytes += max(0, min(end, highestSent) - request.offset)
        highestSent = max(highestSent, end)
        bytesSent += request.data.count
        chunksSent += 1
        inFlight.append(
            Chunk(
                sequence: sequence, offset: request.offset, length: request.data.count,
                carriesSessionFields: request.length != nil))
        nextOffset = end
    }

    /// Applies the device's answer `offset` to the request with `sequence`.
    /// Answers come in request order, so requests before it lost theirs.
    mutating func answered(sequence: UInt8, offset: Int) -> Answer {
        guard let index = inFlight.firstIndex(where: { $0.sequence == sequence }) else { return .stale }
        let chunk = inFlight[index]
        inFlight.removeFirst(index + 1)
        if chunk.carriesSessionFields { needsSessionFields = false }
        // Progress is the device taking new bytes: its offset passing the one it reported last
        // (after a device reset it starts again from 0, and progress counts from there).
        advanced = offset > deviceOffset
        deviceOffset = offset
        if advanced {
            retriesWithoutProgress = 0
            timeoutsWithoutProgress = 0
        }
        if offset == total {
            inFlight.removeAll()
            resynchronising = false
            nextOffset = total
            return .complete
        }
        if offset != chunk.offset + chunk.length { resynchronising = true }
        guard resynchronising else { return .progress }
        if inFlight.isEmpty { restart() }
        return .resynchronising
    }

    /// Forgets the requests in flight (timeout, busy device) and continues from the device's offset.
    mutating func abandonInFlight() {
        inFlight.removeAll()
        restart()
    }

    /// The link dropped: the next chunk, on the new connection, re-sends the session fields.
    mutating func disconnected() {
        inFlight.removeAll()
        needsSessionFields = true
        resynchronising = false
        nextOffset = deviceOffset
    }

    private mutating func restart() {
        resynchronising = false
        nextOffset = deviceOffset
    }

    /// Charges one retry to the progress budget.
    mutating func retried() { retriesWithoutProgress += 1 }

    /// Counts one request timeout; returns how many came since the device last advanced.
    mutating func timedOut() -> Int {
        timeoutsWithoutProgress += 1
        return timeoutsWithoutProgress
    }

    /// Forgets the timeouts counted (after a reconnection meant to clear them).
    mutating func forgetTimeouts() { timeoutsWithoutProgress = 0 }

    /// Starts the upload again from offset 0 (a new session on the device); the counters stay.
    mutating func restartFromScratch() {
        inFlight.removeAll()
        deviceOffset = 0
        nextOffset = 0
        resynchronising = false
        needsSessionFields = true
        advanced = false
        retriesWithoutProgress = 0
        timeoutsWithoutProgress = 0
    }

    /// Bytes sent but not confirmed by the device.
    var unconfirmedBytes: Int { max(0, highestSent - deviceOffset) }
}
