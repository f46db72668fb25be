import Diagnostics

/// A firmware file, read: its format and one memory image per board section.
///
/// `Firmware.parse` is the front door: it detects the format from the content, not the name.
/// A plain Intel HEX is one section whose chip family is guessed from the image
/// (`ChipFamily.guess`); a Universal Hex has one section per board ID.
public struct Firmware: Sendable, Equatable {
    public enum Format: String, Sendable, Hashable, Codable, CaseIterable {
        case intelHex = "intel-hex"
        case universalHex = "universal-hex"
        case uf2
        case mcuboot
        case dfuPackage = "dfu-zip"

        public var displayName: String {
            switch self {
            case .intelHex: return "Intel HEX"
            case .universalHex: return "Universal Hex"
            case .uf2: return "UF2"
            case .mcuboot: return "MCUboot image"
            case .dfuPackage: return "Nordic DFU package (zip)"
            }
        }
    }

    /// One board's image.
    public struct Section: Sendable, Equatable {
        /// The Universal Hex board ID; nil for single-image formats.
        public var boardID: UInt16?
        /// The chip the image is for: from the board ID, or guessed from the image; nil if unknown.
        public var family: ChipFamily?
        public var image: MemoryImage
        public var warnings: [FirmwareWarning]
        /// The start address record of an Intel HEX section (not used for flashing).
        public var startAddress: StartAddress?

        public init(
            boardID: UInt16? = nil, family: ChipFamily?, image: MemoryImage,
            warnings: [FirmwareWarning] = [], startAddress: StartAddress? = nil
        ) {
            self.boardID = boardID
            self.family = family
            self.image = image
            self.warnings = warnings
            self.startAddress = startAddress
        }

        /// How messages name the section: `board ID 0x9900 (micro:bit V1 section: nRF51822)`.
        public var name: String {
            if let id = boardID { return UniversalHex.sectionName(boardID: id) }
            if let f = family { return "one image for \(f.chipName) (\(f.boardNames))" }
            return "one image for an unknown chip"
        }
    }

    public var fileName: String
    public var format: Format
    public var sections: [Section]
    /// Warnings about the file as a whole (section warnings are in each section).
    public var warnings: [FirmwareWarning]
    /// For a Universal Hex: sections or blocks.
    public var universalHexLayout: UniversalHex.Layout?
    /// For an MCUboot image (or a package holding one): the image, to upload as it is.
    public var mcuboot: MCUbootImage?
    /// For a UF2 file: the chip family IDs its blocks name (empty for other formats).
    public var uf2FamilyIDs: [UInt32] = []
    /// For a DFU zip: the package, with every image it holds.
    public var dfuPackage: DFUPackage?

    public init(
        fileName: String, format: Format, sections: [Section], warnings: [FirmwareWarning] = [],
        universalHexLayout: UniversalHex.Layout? = nil
    ) {
        self.fileName = fileName
        self.format = format
        self.sections = sections
        self.warnings = warnings
        self.universalHexLayout = universalHexLayout
    }

    /// Reads a firmware file held in memory (see `parse(source:size:fileName:)` to read one in pieces).
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - fileName: used in messages only; the format comes from the content.
    /// - Throws: `FirmwareImageError`; text formats name the line and column.
    public static func parse(_ bytes: [UInt8], fileName: String) throws -> Firmware {
        var source = ByteArraySource(bytes)
        return try parse(source: &source, size: bytes.count, fileName: fileName)
    }

    /// Reads a whole file of a binary format.
    static func parseWhole(_ bytes: [UInt8], format: Format, fileName: String) throws -> Firmware {
        switch format {
        case .intelHex, .universalHex:
            return try fromHex(IntelHexReader.parse(bytes), fileName: fileName)
        case .uf2:
            let uf2 = try UF2File.parse(bytes)
            let family = ChipFamily.allCases.first { f in f.uf2FamilyID.map(uf2.familyIDs.contains) ?? false }
            var firmware = Firmware(
                fileName: fileName, format: .uf2,
                sections: [
                    Section(
                        family: family ?? ChipFamily.guess(from: uf2.image), image: uf2.image,
                        warnings: uf2.warnings.map(FirmwareWarning.note))
                ])
            firmware.uf2FamilyIDs = uf2.familyIDs
            return firmware
        case .mcuboot:
            return try mcubootFirmware(MCUbootImage(bytes: bytes), fileName: fileName, format: .mcuboot)
        case .dfuPackage:
            return try dfuPackageFirmware(DFUPackage(zipBytes: bytes), fileName: fileName)
        }
    }

    /// The format the content announces (magic numbers; `:` for Intel HEX), or nil.
    /// Intel HEX and Universal Hex are told apart only by parsing, so this says `.intelHex` for both.
    public static func detectFormat(_ bytes: [UInt8]) -> Format? {
        func le32(_ i: Int) -> UInt32? { try? LEBytes.u32(bytes, i) }
        if le32(0) == 0x0A32_4655, le32(4) == 0x9E5D_5157 { return .uf2 }
        if le32(0) == 0x96F3_B83D { return .mcuboot }
        if le32(0) == 0x0403_4B50 { return .dfuPackage }
        var i = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: ":") { return .intelHex }
        return nil
    }

    /// An MCUboot image as firmware: its body at its load address (or at 0 for an
    /// execute-in-place image, whose address the slot decides), and the image itself.
    static func mcubootFirmware(_ mcuboot: MCUbootImage, fileName: String, format: Format) throws -> Firmware {
        var image = MemoryImage()
        try image.write(Array(mcuboot.body), at: mcuboot.header.loadAddress, overwrite: true)
        var firmware = Firmware(
            fileName: fileName, format: format,
            sections: [Section(family: nil, image: image, warnings: [])])
        firmware.mcuboot = mcuboot
        return firmware
    }

    /// A parsed Intel HEX or Universal Hex as firmware: each section's chip from its board ID or its contents.
    static func fromHex(_ hex: IntelHexFile, fileName: String) throws -> Firmware {
        var fileWarnings = hex.warnings
        let sections = hex.sections.map { s -> Section in
            var family: ChipFamily?
            var warnings: [FirmwareWarning] = []
            if let id = s.boardID {
                family = UniversalHex.family(forBoardID: id)
                if family == nil {
                    warnings.append(.unknownBoardID(id))
                    family = ChipFamily.guess(from: s.image)
                }
            } else {
                family = ChipFamily.guess(from: s.image)
            }
            return Section(
                boardID: s.boardID, family: family, image: s.image, warnings: warnings,
                startAddress: s.startAddress)
        }
        // A plain file's warnings belong to its only image.
        var result = sections
        if !hex.isUniversalHex, result.count == 1 {
            result[0].warnings += fileWarnings
            fileWarnings = []
        }
        return Firmware(
            fileName: fileName, format: hex.isUniversalHex ? .universalHex : .intelHex,
            sections: result, warnings: fileWarnings, universalHexLayout: hex.universalHexLayout)
    }

    /// The section a board uses: the Universal Hex section with one of its family's board IDs, or
    /// the single image if its family matches or is unknown. For an MCUboot image (or a package of
    /// one), its application where the board's MCUboot runs it: at the board's application start,
    /// the same for `flash`, `plan` and `convert`.
    /// - Throws: `FirmwareImageError.noImageForBoard`, naming the sections the file has.
    public func section(for board: Board) throws -> Section {
        let family = board.family
        if let own = mcuboot, sections.count == 1, sections[0].family == nil, sections[0].boardID == nil {
            var placed = MemoryImage()
            try placed.write(Array(own.body), at: family.layout.applicationStart)
            return Section(family: nil, image: placed, warnings: sections[0].warnings)
        }
        if let s = sections.first(where: { $0.boardID.map(family.universalHexBoardIDs.contains) ?? false }) {
            return s
        }
        if let s = sections.first(where: { $0.boardID == nil && ($0.family == nil || $0.family == family) }) {
            return s
        }
        let wanted =
            format == .universalHex
            ? "\(family.universalHexSectionName) section (board ID \(family.universalHexBoardIDs.map(UniversalHex.boardIDString).joined(separator: "/")))"
            : "\(family.chipName) image"
        throw FirmwareImageError.noImageForBoard(
            board, fileName: fileName, wanted: wanted,
            available: sections.map(\.name))
    }

    /// The memory image to flash to `board`.
    public func image(for board: Board) throws -> MemoryImage { try section(for: board).image }

    /// Every warning, file-level first.
    public var allWarnings: [FirmwareWarning] { warnings + sections.flatMap(\.warnings) }

    /// `starts with 23 20 41 64 … ("# Ad…")`.
    static func describeStart(_ bytes: [UInt8]) -> String {
        let head = bytes.prefix(8)
        let hex = head.map { Hex.number($0, digits: 2, prefix: false) }.joined(separator: " ")
        let text = String(decoding: head.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
        return "it starts with \(hex)\(bytes.count > 8 ? " …" : "") (\"\(text)\")"
    }
}

extension ChipFamily {
    /// Guesses the chip a plain image is for, from what micro:bit and Calliope builds put where:
    /// the bootloader address in UICR (0x10001014: 0x3C000 on nRF51, 0x77000 on nRF52833), else the
    /// first vector-table word (the nRF51 MBR's 0x7C0, or an initial stack pointer at the top of
    /// 16/32 KiB or 128 KiB of RAM). Nil when nothing matches or the data does not fit the chip.
    public static func guess(from image: MemoryImage) -> ChipFamily? {
        func word(_ a: UInt32) -> UInt32? {
            guard image.hasData(in: a..<(a + 4)) else { return nil }
            var v: UInt32 = 0
            for k in 0..<4 {
                guard let b = image.byte(at: a + UInt32(k)) else { return nil }
                v |= UInt32(b) << (8 * UInt32(k))
            }
            return v
        }
        var guess: ChipFamily?
        switch word(0x1000_1014) {
        case 0x3C000: guess = .nrf51
        case 0x77000: guess = .nrf52833
        default:
            switch word(0) {
            case 0x0000_07C0, 0x2000_4000, 0x2000_8000: guess = .nrf51
            case 0x2002_0000: guess = .nrf52833
            default: guess = nil
            }
        }
        // Flash data must fit the chip (UICR and other areas past 0x10000000 are fine).
        if let g = guess, image.hasData(in: g.layout.flashSize..<0x1000_0000) { return nil }
        return guess
    }
}
