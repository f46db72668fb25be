/// Writes a memory image as Intel HEX, with the variations real tools produce (for `convert`,
/// the samples and the parser's mutation tests).
public enum IntelHexWriter {
    public enum LineEnding: String, Sendable, Hashable, Codable, CaseIterable {
        case lf, crlf
        var bytes: [UInt8] { self == .lf ? [0x0A] : [0x0D, 0x0A] }
    }

    /// How upper address bits are written.
    public enum Addressing: String, Sendable, Hashable, Codable, CaseIterable {
        /// Extended linear address (04) records only.
        case linear
        /// Extended segment address (02) records below 1 MiB, 04 above (as MicroPython V2 and CODAL builds do).
        case segmentWherePossible
    }

    public struct Options: Sendable, Hashable {
        /// Data bytes per record, 1-255. Records never cross a 64 KiB boundary, so some are shorter.
        public var recordLength: Int
        public var lineEnding: LineEnding
        public var uppercase: Bool
        public var addressing: Addressing
        /// When set, data records come in an order shuffled with this seed (each still preceded by the
        /// address record it needs).
        public var shuffleSeed: UInt64?
        /// Written as a 03 or 05 record before the end-of-file record.
        public var startAddress: StartAddress?
        /// 00, or 0D for the non-V1 sections of a Universal Hex.
        public var dataRecordType: IntelHexRecord.RecordType

        public init(
            recordLength: Int = 16, lineEnding: LineEnding = .lf, uppercase: Bool = true,
            addressing: Addressing = .linear, shuffleSeed: UInt64? = nil, startAddress: StartAddress? = nil,
            dataRecordType: IntelHexRecord.RecordType = .data
        ) {
            self.recordLength = recordLength
            self.lineEnding = lineEnding
            self.uppercase = uppercase
            self.addressing = addressing
            self.shuffleSeed = shuffleSeed
            self.startAddress = startAddress
            self.dataRecordType = dataRecordType
        }
    }

    /// The file's bytes.
    public static func write(_ image: MemoryImage, options: Options = Options()) -> [UInt8] {
        let records = self.records(for: image, options: options)
        var out: [UInt8] = []
        out.reserveCapacity(image.byteCount * 2 + image.byteCount / max(1, options.recordLength) * 14 + 64)
        let ending = options.lineEnding.bytes
        for r in records {
            r.encode(into: &out, uppercase: options.uppercase)
            out.append(contentsOf: ending)
        }
        return out
    }

    /// The records of the file, ending with the end-of-file record.
    public static func records(for image: MemoryImage, options: Options = Options()) -> [IntelHexRecord] {
        var records = bodyRecords(for: image, options: options)
        if let start = options.startAddress { records.append(start.record) }
        records.append(.endOfFile)
        return records
    }

    /// Address and data records only: no start address, no end-of-file record.
    static func bodyRecords(for image: MemoryImage, options: Options) -> [IntelHexRecord] {
        var units = dataUnits(of: image, recordLength: options.recordLength)
        if let seed = options.shuffleSeed {
            var rng = SplitMix64(seed: seed)
            units.shuffle(using: &rng)
        }
        var records: [IntelHexRecord] = []
        records.reserveCapacity(units.count + 16)
        var base: UInt32?
        for u in units {
            let needed: UInt32
            let addressRecord: IntelHexRecord
            if options.addressing == .segmentWherePossible, u.address < 0x10_0000 {
                let segment = UInt16(truncatingIfNeeded: (u.address >> 4) & 0xF000)
                needed = UInt32(segment) << 4
                addressRecord = .extendedSegmentAddress(segment: segment)
            } else {
                let upper = UInt16(truncatingIfNeeded: u.address >> 16)
                needed = UInt32(upper) << 16
                addressRecord = .extendedLinearAddress(upper: upper)
            }
            if base != needed {
                records.append(addressRecord)
                base = needed
            }
            records.append(
                IntelHexRecord(
                    type: options.dataRecordType, offset: UInt16(truncatingIfNeeded: u.address),
                    data: u.bytes))
        }
        return records
    }

    /// One data record's worth: never longer than `recordLength`, never across a 64 KiB boundary.
    struct Unit {
        var address: UInt32
        var bytes: [UInt8]
    }

    static func dataUnits(of image: MemoryImage, recordLength: Int) -> [Unit] {
        precondition((1...255).contains(recordLength), "Intel HEX records hold 1-255 data bytes")
        var units: [Unit] = []
        units.reserveCapacity(image.byteCount / recordLength + image.segments.count * 2)
        for s in image.segments {
            var k = 0
            while k < s.bytes.count {
                let address = s.start + UInt32(k)
                let toBoundary = 0x10000 - Int(address & 0xFFFF)
                let count = min(recordLength, s.bytes.count - k, toBoundary)
                units.append(Unit(address: address, bytes: Array(s.bytes[k..<(k + count)])))
                k += count
            }
        }
        return units
    }
}
