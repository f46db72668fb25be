import CBOR

/// Cuts SMP frames out of a stream of BLE notifications. A frame may span
/// several notifications and one notification may hold several frames; the
/// header's length field marks the boundaries.
///
/// Feed bytes with `append(_:)` and take frames with `next()`, or do both with
/// `decode(_:)`. A declared payload longer than `maximumPayloadLength` throws
/// at once (before it is buffered) and clears the buffer, since the stream
/// cannot be resynchronised; a complete frame whose payload is not CBOR is
/// consumed and throws, so later frames still decode.
public struct SMPReassembler: Sendable {
    /// The longest payload accepted (the 16-bit length field allows 65 535).
    public var maximumPayloadLength: Int
    /// The CBOR decoder used for payloads.
    public var decoder: CBORDecoder

    private var buffer: [UInt8] = []
    private var start = 0

    public init(maximumPayloadLength: Int = 8192, decoder: CBORDecoder = CBORDecoder()) {
        self.maximumPayloadLength = maximumPayloadLength
        self.decoder = decoder
    }

    /// Bytes received but not yet part of a returned frame.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, or nil when more bytes are needed.
    public mutating func next() throws(SMPError) -> SMPFrame? {
        guard bufferedByteCount >= SMPHeader.size else { return nil }
        let header: SMPHeader
        do {
            header = try SMPHeader(bytes: buffer[start..<start + SMPHeader.size])
        } catch {
            reset()
            throw error
        }
        let length = Int(header.length)
        guard length <= maximumPayloadLength else {
            reset()
            throw .frameTooLarge(declared: length, limit: maximumPayloadLength)
        }
        guard bufferedByteCount >= SMPHeader.size + length else { return nil }
        let frameBytes = Array(buffer[start..<start + SMPHeader.size + length])
        start += frameBytes.count
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        return try SMPFrame(bytes: frameBytes, decoder: decoder)
    }

    /// Adds `bytes` and returns every frame now complete, in order.
    public mutating func decode(_ bytes: some Sequence<UInt8>) throws(SMPError) -> [SMPFrame] {
        append(bytes)
        var frames: [SMPFrame] = []
        while let frame = try next() { frames.append(frame) }
        return frames
    }

    /// Drops everything buffered (e.g. after a reconnect).
    public mutating func reset() {
        buffer.removeAll()
        start = 0
    }
}
