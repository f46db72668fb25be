/// The bytes of a firmware file, read in order, so that a file need not be held whole:
/// `Firmware.parse(source:fileName:)` recognises the format from the first bytes, refuses a file
/// larger than its format's limit before reading the rest, and parses Intel HEX as it streams in.
///
/// A source for a file on disk reads it in pieces; `ByteArraySource` serves bytes already in memory.
public protocol FirmwareByteSource {
    /// The next bytes, at most `maximum` of them (fewer is fine; a source that holds its bytes in
    /// memory already may hand them all over at once); empty only at the end.
    mutating func read(maximum: Int) throws -> [UInt8]
    /// Goes back to the first byte. An Intel HEX whose records disagree about a byte is read a
    /// second time, to name both lines; sources that cannot go back throw, and the error then
    /// names the later line only.
    mutating func rewind() throws
}

/// Bytes in memory as a source: the first read returns them all, whatever `maximum` says.
public struct ByteArraySource: FirmwareByteSource, Sendable {
    public let bytes: [UInt8]
    private var done = false

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public mutating func read(maximum: Int) throws -> [UInt8] {
        guard !done else { return [] }
        done = true
        return bytes
    }

    public mutating func rewind() throws { done = false }
}

/// A source that yields another source's bytes in pieces of at most `piece` bytes (tests use it
/// to check that where a file is cut into reads changes nothing).
public struct PiecewiseSource<Base: FirmwareByteSource>: FirmwareByteSource {
    var base: Base
    let piece: Int
    private var pending: [UInt8] = []
    private var offset = 0

    public init(_ base: Base, piece: Int) {
        precondition(piece > 0, "pieces must hold at least one byte")
        self.base = base
        self.piece = piece
    }

    public mutating func read(maximum: Int) throws -> [UInt8] {
        if offset == pending.count {
            pending = try base.read(maximum: max(maximum, piece))
            offset = 0
            if pending.isEmpty { return [] }
        }
        let n = min(piece, maximum, pending.count - offset)
        defer { offset += n }
        return Array(pending[offset..<(offset + n)])
    }

    public mutating func rewind() throws {
        try base.rewind()
        pending = []
        offset = 0
    }
}
