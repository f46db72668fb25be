/// The MakeCode program region of a board image: what partial flashing sends.
///
/// The program starts at a page-aligned 16-byte magic; the 8-byte runtime
/// (DAL/CODAL) hash follows at +16 and the 8-byte program hash at +24
/// (partial-flashing-protocol.md §5.2).
public struct MakeCodeProgram: Sendable, Equatable {
    /// The magic as stored in flash.
    public static let magic: [UInt8] = [0x70, 0x8E, 0x3B, 0x92, 0xC6, 0x15, 0xA8, 0x41,
                                        0xC4, 0x98, 0x66, 0xC9, 0x75, 0xEE, 0x51, 0x97]

    /// Address of the magic: the start of the program region.
    public let magicAddress: UInt32
    /// The 8 bytes at magic+16: identifies the runtime build.
    public let runtimeHash: [UInt8]
    /// The 8 bytes at magic+24: identifies the program.
    public let programHash: [UInt8]
    /// The bytes partial flashing writes: from the magic to the last data byte below
    /// the scratch page, padded up to a 64-byte boundary.
    public let region: Range<UInt32>

    public init(magicAddress: UInt32, runtimeHash: [UInt8], programHash: [UInt8], region: Range<UInt32>) {
        self.magicAddress = magicAddress
        self.runtimeHash = runtimeHash
        self.programHash = programHash
        self.region = region
    }
}

extension Array where Element == UInt8 {
    /// Upper-case hex, no separators: `22204AC874977E7F`.
    public var hexString: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for b in self { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
