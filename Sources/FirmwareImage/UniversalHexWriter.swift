/// Writes several board images as one Universal Hex (docs/protocols/partial-flashing.md §6.2).
///
/// Sections layout: per board, an extended linear address record, the block start (0A), the
/// board's address and data records (00 for V1 board IDs, 0D otherwise), 0C padding and a block
/// end (0B) so that the section is a multiple of 512 characters; one end-of-file record at the
/// end. Blocks layout: self-contained 512-character blocks, each `04 0A data… [0C…] 0B`.
/// Lines end with LF (the 512-character arithmetic counts it).
public enum UniversalHexWriter {
    public static let blockSize = 512

    public struct Options: Sendable, Hashable {
        public var layout: UniversalHex.Layout
        /// Data bytes per record: 1-255 for sections, 1-226 for blocks (a record must fit a block).
        /// DAPLink reads at most 32.
        public var recordLength: Int
        public var uppercase: Bool

        public init(layout: UniversalHex.Layout = .sections, recordLength: Int = 16, uppercase: Bool = true) {
            self.layout = layout
            self.recordLength = recordLength
            self.uppercase = uppercase
        }
    }

    /// One board's image and its ID.
    public struct Section: Sendable, Equatable {
        public var boardID: UInt16
        public var image: MemoryImage
        public init(boardID: UInt16, image: MemoryImage) {
            self.boardID = boardID
            self.image = image
        }
    }

    /// The file's bytes.
    public static func write(_ sections: [Section], options: Options = Options()) -> [UInt8] {
        var lines: [IntelHexRecord] = []
        for section in sections {
            let dataType: IntelHexRecord.RecordType =
                ChipFamily.nrf51.universalHexBoardIDs.contains(section.boardID)
                ? .data : .customData
            switch options.layout {
            case .sections:
                appendSection(section, dataType: dataType, options: options, to: &lines)
            case .blocks:
                appendBlocks(section, dataType: dataType, options: options, to: &lines)
            }
        }
        lines.append(.endOfFile)
        var out: [UInt8] = []
        out.reserveCapacity(lines.count * (12 + 2 * options.recordLength))
        for r in lines {
            r.encode(into: &out, uppercase: options.uppercase)
            out.append(0x0A)
        }
        return out
    }

    /// Characters a record takes in the file, with its LF.
    static func lineLength(_ r: IntelHexRecord) -> Int { 12 + 2 * r.data.count }

    private static func appendSection(
        _ section: Section, dataType: IntelHexRecord.RecordType, options: Options,
        to lines: inout [IntelHexRecord]
    ) {
        precondition((1...255).contains(options.recordLength), "Intel HEX records hold 1-255 data bytes")
        var body = IntelHexWriter.bodyRecords(
            for: section.image,
            options: IntelHexWriter.Options(recordLength: options.recordLength, dataRecordType: dataType))
        if body.first?.type != .extendedLinearAddress { body.insert(.extendedLinearAddress(upper: 0), at: 0) }
        body.insert(.blockStart(boardID: section.boardID), at: 1)
        var length = body.reduce(0) { $0 + lineLength($1) } + lineLength(.blockEnd(padding: 0))
        var needed = (blockSize - length % blockSize) % blockSize
        let capacity = options.recordLength
        while needed > 2 * capacity, needed >= 12 {
            let pad = IntelHexRecord.paddedData(count: min((needed - 12) / 2, capacity))
            body.append(pad)
            length += lineLength(pad)
            needed = (blockSize - length % blockSize) % blockSize
        }
        body.append(.blockEnd(padding: needed / 2))
        lines.append(contentsOf: body)
    }

    private static func appendBlocks(
        _ section: Section, dataType: IntelHexRecord.RecordType, options: Options,
        to lines: inout [IntelHexRecord]
    ) {
        precondition((1...226).contains(options.recordLength), "a blocks-layout record holds 1-226 data bytes")
        let units = IntelHexWriter.dataUnits(of: section.image, recordLength: options.recordLength)
        let start = IntelHexRecord.blockStart(boardID: section.boardID)
        let fixed = lineLength(.extendedLinearAddress(upper: 0)) + lineLength(start) + lineLength(.blockEnd(padding: 0))
        var k = 0
        while k < units.count {
            let upper = UInt16(truncatingIfNeeded: units[k].address >> 16)
            lines.append(.extendedLinearAddress(upper: upper))
            lines.append(start)
            var used = fixed
            while k < units.count, UInt16(truncatingIfNeeded: units[k].address >> 16) == upper {
                let record = IntelHexRecord(
                    type: dataType, offset: UInt16(truncatingIfNeeded: units[k].address),
                    data: units[k].bytes)
                guard used + lineLength(record) <= blockSize else { break }
                lines.append(record)
                used += lineLength(record)
                k += 1
            }
            var needed = blockSize - used
            while needed > 2 * options.recordLength, needed >= 12 {
                let pad = IntelHexRecord.paddedData(count: min((needed - 12) / 2, options.recordLength))
                lines.append(pad)
                needed -= lineLength(pad)
            }
            lines.append(.blockEnd(padding: needed / 2))
        }
    }
}
