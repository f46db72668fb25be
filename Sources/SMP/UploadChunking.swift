import CBOR

/// The largest frame the device takes in one piece.
public enum SMPFrameLimit: Sendable, Hashable {
    /// No reassembly known: one frame per write, ATT_MTU − 3 bytes.
    case attMTU(Int)
    /// The device reassembles frames up to its `buf_size` (OS command 6).
    case reassemblyBuffer(Int)

    /// The largest encoded frame, header included.
    public var maximumFrameSize: Int {
        switch self {
        case let .attMTU(mtu): return mtu - 3
        case let .reassemblyBuffer(size): return size
        }
    }
}

/// Chunk sizes for image upload, computed by encoding the request rather
/// than by estimating its overhead.
public enum UploadChunking {
    /// The largest number of data bytes a chunk can carry so that the
    /// encoded frame (8-byte header + CBOR map) fits `limit`, rounded down to a
    /// multiple of `alignment`.
    ///
    /// `template` supplies every field except the data: its `offset`, and on the
    /// first chunk `length`, `sha`, `image` and `upgrade`. Its `data` is ignored.
    /// The result may exceed what remains of the image; take the minimum.
    public static func maximumDataLength(
        fitting limit: SMPFrameLimit, template: ImageUploadRequest,
        alignment: Int = 1
    ) throws(SMPError) -> Int {
        guard alignment >= 1 else { throw .invalidArgument("alignment must be at least 1, got \(alignment)") }
        let frameLimit = limit.maximumFrameSize
        var empty = template
        empty.data = []
        // With no data the byte string head is one byte (0x40); it grows with the data length.
        let overhead = SMPHeader.size + empty.payload.encoded().count - 1
        var best = 0
        for headSize in [1, 2, 3, 5] {
            let candidate = frameLimit - overhead - headSize
            guard candidate > 0 else { continue }
            if byteStringHeadSize(candidate) == headSize { best = max(best, candidate) }
            // A candidate whose head would be longer is shrunk to the head size's largest length.
            let cap = maximumLength(forHeadSize: headSize)
            if candidate > cap, byteStringHeadSize(cap) == headSize { best = max(best, cap) }
        }
        let aligned = best - best % alignment
        guard aligned > 0 else { throw .chunkDoesNotFit(frameLimit: frameLimit, overhead: overhead + 1) }
        return aligned
    }

    /// Bytes of the CBOR head of a byte string of `length` bytes.
    static func byteStringHeadSize(_ length: Int) -> Int {
        switch length {
        case ..<24: return 1
        case ..<256: return 2
        case ..<65536: return 3
        default: return 5
        }
    }

    static func maximumLength(forHeadSize size: Int) -> Int {
        switch size {
        case 1: return 23
        case 2: return 255
        case 3: return 65535
        default: return Int(UInt32.max)
        }
    }
}
