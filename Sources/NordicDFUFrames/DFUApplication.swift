import FirmwareImage

/// The application binary a Nordic DFU sends, cut from a board image as the reference
/// clients cut it (docs/protocols/nordic-dfu.md §4): the board's part of the hex from the application start
/// up to the bootloader (0x1C000…0x77000 on nRF52833, 0x18000…0x3C000 on nRF51), gaps filled
/// with 0xFF, from the start to the highest byte of data, rounded up to a multiple of 4.
public struct DFUApplication: Sendable, Equatable {
    public let family: ChipFamily
    /// Where the binary lands in flash.
    public let start: UInt32
    public let bytes: [UInt8]

    /// The range the clients cut from.
    public static func range(for family: ChipFamily) -> Range<UInt32> {
        family == .nrf51 ? 0x18000..<0x3C000 : 0x1C000..<0x77000
    }

    /// The largest application the stock bootloader accepts: 0x58000 bytes on nRF52833
    /// (single bank below the 12 KiB kept for the runtime's storage), 0x24000 on nRF51.
    public static func maximumSize(for family: ChipFamily) -> Int {
        family == .nrf51 ? 0x24000 : 0x58000
    }

    public init(family: ChipFamily, start: UInt32, bytes: [UInt8]) {
        self.family = family
        self.start = start
        self.bytes = bytes
    }

    /// The binary of `image` for a board of `family`.
    /// - Throws: `NordicDFUError.noApplication` when the image has nothing in the range,
    ///   `.applicationTooLarge` when it exceeds what the bootloader accepts.
    public static func cut(from image: MemoryImage, family: ChipFamily) throws -> DFUApplication {
        let range = range(for: family)
        guard let span = image.slice(range).span else { throw NordicDFUError.noApplication(family: family) }
        let length = (Int(span.upperBound - range.lowerBound) + 3) & ~3
        guard length <= maximumSize(for: family) else {
            throw NordicDFUError.applicationTooLarge(bytes: length, maximum: maximumSize(for: family))
        }
        let bytes = image.read(range.lowerBound..<(range.lowerBound + UInt32(length)), fill: 0xFF)
        return DFUApplication(family: family, start: range.lowerBound, bytes: bytes)
    }

    /// The secure bootloader's init command for this binary.
    public var secureInitPacket: MicrobitAppInitPacket { MicrobitAppInitPacket(application: bytes) }
    /// The legacy bootloader's init packet for this binary.
    public var legacyInitPacket: LegacyInitPacket { LegacyInitPacket(application: bytes) }
}
