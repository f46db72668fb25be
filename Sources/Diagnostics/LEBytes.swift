/// Little-endian integers in byte arrays: the one reader and writer of the binary formats
/// (MCUboot, UF2, ZIP, DFU init packets, MicroPython's layout table, the simulated key-value
/// store) and of the protocol frames. A read that reaches past the end throws `PastTheEnd`; it
/// never traps, so a parser that forgot a bounds check reports a cut-short input.
public enum LEBytes {
    /// A read of `width` bytes at `offset` that `count` bytes do not hold.
    public struct PastTheEnd: DomainError, Equatable, CustomStringConvertible {
        /// Where the field starts.
        public let offset: Int
        /// The field's size in bytes.
        public let width: Int
        /// How many bytes there are.
        public let count: Int

        public init(offset: Int, width: Int, count: Int) {
            self.offset = offset
            self.width = width
            self.count = count
        }

        public var failureKind: FailureKind { .malformedData }

        public var description: String {
            "a \(width * 8)-bit field at byte \(offset) reaches past the end of the \(count) bytes there are: "
                + "the data is cut short or not in the format expected"
        }
    }

    /// The unsigned 16-bit integer whose low byte is at `offset`.
    public static func u16(_ bytes: [UInt8], _ offset: Int) throws(PastTheEnd) -> UInt16 {
        try check(bytes, offset, 2)
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// The unsigned 32-bit integer whose low byte is at `offset`.
    public static func u32(_ bytes: [UInt8], _ offset: Int) throws(PastTheEnd) -> UInt32 {
        try check(bytes, offset, 4)
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }

    /// Appends `value`, low byte first.
    public static func put(_ out: inout [UInt8], _ value: UInt16) {
        out += [UInt8(value & 0xFF), UInt8(value >> 8)]
    }

    /// Appends `value`, low byte first.
    public static func put(_ out: inout [UInt8], _ value: UInt32) {
        out += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    /// The two bytes of `value`, low byte first.
    public static func bytes(_ value: UInt16) -> [UInt8] {
        var out: [UInt8] = []
        put(&out, value)
        return out
    }

    /// The four bytes of `value`, low byte first.
    public static func bytes(_ value: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        put(&out, value)
        return out
    }

    private static func check(_ bytes: [UInt8], _ offset: Int, _ width: Int) throws(PastTheEnd) {
        guard offset >= 0, offset <= bytes.count - width else {
            throw PastTheEnd(offset: offset, width: width, count: bytes.count)
        }
    }
}
