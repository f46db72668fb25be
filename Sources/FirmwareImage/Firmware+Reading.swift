/// Reading a firmware file without holding more of it than its format needs: the format is
/// recognised from the first bytes, a file larger than its format's limit is refused before the
/// rest is read, and Intel HEX is parsed as it streams in.
extension Firmware {
    /// How many bytes are read to recognise the format.
    public static let headSize = 4096

    /// Reads a firmware file from `source`.
    /// - Parameters:
    ///   - size: the file's size when known (a regular file): a file over its format's limit is
    ///     refused before its data is read. Unknown (a pipe), the limit is enforced while reading.
    ///   - fileName: used in messages only; the format comes from the content.
    /// - Throws: `FirmwareImageError` (`fileTooLarge`, `unrecognizedFormat`, the format's own),
    ///   or what the source throws.
    public static func parse(source: inout some FirmwareByteSource, size: Int? = nil, fileName: String) throws
        -> Firmware
    {
        var head: [UInt8] = []
        while head.count < headSize {
            let more = try source.read(maximum: headSize - head.count)
            if more.isEmpty { break }
            head += more
        }
        guard !head.isEmpty else { throw FirmwareImageError.emptyFile }
        let format = try recognise(head, fileName: fileName, complete: size.map { $0 <= head.count } ?? false)
        let limit = format.maximumFileSize
        if let size, size > limit {
            throw FirmwareImageError.fileTooLarge(format: format, size: size, limit: limit)
        }
        switch format {
        case .intelHex, .universalHex:
            var rest = LimitedSource(head: head, rest: source, limit: limit, format: format)
            defer { source = rest.rest }
            return try fromHex(IntelHexReader.parse(source: &rest), fileName: fileName)
        case .uf2, .mcuboot, .dfuPackage:
            var bytes = head
            while true {
                let more = try source.read(maximum: limit + 1 - bytes.count)
                if more.isEmpty { break }
                bytes += more
                if bytes.count > limit {
                    throw FirmwareImageError.fileTooLarge(format: format, size: nil, limit: limit)
                }
            }
            return try parseWhole(bytes, format: format, fileName: fileName)
        }
    }

    /// The format the first bytes announce. A file named `.hex` that announces none gets the
    /// Intel HEX reader's exact complaint (line and column of the first wrong character).
    static func recognise(_ head: [UInt8], fileName: String, complete: Bool) throws -> Format {
        if let format = detectFormat(head) { return format }
        let blank: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF]
        let onlyBlank = head.allSatisfy(blank.contains)
        if fileName.lowercased().hasSuffix(".hex"), !onlyBlank || complete {
            _ = try IntelHexReader.parse(head)  // throws: the head holds no ':' where a record must start
        }
        var detail = describeStart(head)
        if onlyBlank, !complete { detail = "its first \(grouped(head.count)) bytes are blank" }
        throw FirmwareImageError.unrecognizedFormat(fileName: fileName, detail: detail)
    }
}

extension Firmware.Format {
    /// The bytes one board image can take: the largest supported flash (512 KiB on nRF52833) and
    /// its UICR page (4 KiB), which hex files for these boards also fill.
    public static let largestImage = Int(ChipFamily.allCases.map { $0.layout.flashSize + $0.pageSize }.max() ?? 0)

    /// The largest file of this format that can hold firmware for the supported boards; larger
    /// files are refused before they are read (`FirmwareImageError.fileTooLarge`).
    public var maximumFileSize: Int {
        switch self {
        case .intelHex, .universalHex:
            // A Universal Hex section per board ID, each written as 16-byte records: 45 characters
            // (`:10AAAA00`, 32 digits, the checksum and CR LF) per 16 bytes.
            return ChipFamily.allCases.flatMap(\.universalHexBoardIDs).count * Self.largestImage * 45 / 16
        case .uf2:
            // 256 data bytes in every 512-byte block, as uf2conv and MakeCode write them.
            return Self.largestImage / 256 * 512
        case .mcuboot:
            // An image (and any padding after it) fits in a slot, which lies in the flash.
            return Int(ChipFamily.allCases.map(\.layout.flashSize).max() ?? 0)
        case .dfuPackage:
            // Stored without compression: an image of up to a whole flash, its init packet and
            // manifest, and room for a second image.
            return 2 * Self.largestImage
        }
    }

    /// How the limit is made up, for the message that refuses a larger file.
    public var maximumFileSizeReason: String {
        let image = "\(Self.largestImage / 1024) KiB (the largest board's flash and its UICR page)"
        switch self {
        case .intelHex, .universalHex:
            return
                "a Universal Hex section for each of the \(ChipFamily.allCases.flatMap(\.universalHexBoardIDs).count) board IDs, each up to \(image), in 16-byte records"
        case .uf2:
            return "up to \(image) in blocks of 256 data bytes"
        case .mcuboot:
            return "an MCUboot image fits in a slot of the largest board's flash"
        case .dfuPackage:
            return "room for two images of up to \(image) each, stored uncompressed"
        }
    }
}

/// Yields `head`, then the rest of the source, and refuses to go past `limit` bytes.
struct LimitedSource<Rest: FirmwareByteSource>: FirmwareByteSource {
    var head: [UInt8]
    var rest: Rest
    let limit: Int
    let format: Firmware.Format
    private var headDone = false
    private var count = 0

    init(head: [UInt8], rest: Rest, limit: Int, format: Firmware.Format) {
        self.head = head
        self.rest = rest
        self.limit = limit
        self.format = format
    }

    mutating func read(maximum: Int) throws -> [UInt8] {
        let bytes: [UInt8]
        if !headDone {
            headDone = true
            bytes = head
        } else {
            bytes = try rest.read(maximum: maximum)
        }
        count += bytes.count
        if count > limit { throw FirmwareImageError.fileTooLarge(format: format, size: nil, limit: limit) }
        return bytes
    }

    /// Goes back to the start: the source itself is read again from its first byte.
    mutating func rewind() throws {
        try rest.rewind()
        headDone = true
        count = 0
    }
}

/// `1,056,768`.
func grouped(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = ""
    for (k, c) in digits.enumerated() {
        if k > 0, (digits.count - k) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (n < 0 ? "-" : "") + out
}
