import FirmwareImage
import NordicDFU
import NordicDFUFrames

/// libFuzzer entry point for the Nordic DFU decoders: every frame a board sends or a client
/// writes (Secure DFU requests and control-point answers, buttonless messages, legacy DFU
/// requests, notifications and image sizes), both init packets, the CRCs, and the cut of the
/// application from a memory image built from the input.
///
/// Checked on every input:
/// * a decoder either returns a value or throws `NordicDFUError.malformedFrame`;
/// * what decodes re-encodes to the same bytes and decodes again to the same value (legacy
///   DFU requests: the bootloader ignores trailing bytes, so only the second part);
/// * values built from the input (well-formed ones: the shapes an encoder can produce)
///   decode back to themselves: decode(encode(x)) == x;
/// * CRC-32 fed in input-chosen pieces equals the one-shot CRC and a bitwise reference;
///   CRC-16/CCITT-FALSE equals a bitwise reference;
/// * the application cut starts at the range, is a multiple of 4 bytes, no larger than the
///   bootloader accepts, carries the image's bytes (0xFF in gaps) and ends within 3 bytes of
///   the last byte of data; it fails only when there is no data or too much.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNordicFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    decodeAll(bytes)
    guard let first = bytes.first else { return 0 }
    let rest = Array(bytes.dropFirst())
    encodeAndDecode(rest)
    checksums(rest, cut: Int(first))
    cutApplication(rest, family: first & 1 == 0 ? .nrf52833 : .nrf51)
    return 0
}

/// Decodes `bytes` as `T`; a value must re-encode to `bytes` (when `exact`) and decode
/// to itself again.
func decoded<T: Equatable>(
    _ bytes: [UInt8], exact: Bool = true, _ decode: ([UInt8]) throws -> T,
    _ encode: (T) -> [UInt8]
) {
    let value: T
    do {
        value = try decode(bytes)
    } catch NordicDFUError.malformedFrame {
        return
    } catch {
        fatalError("\(T.self) threw \(error), not a malformedFrame")
    }
    let again = encode(value)
    if exact { require(again == bytes, "\(T.self) \(value) re-encodes to \(again), read from \(bytes)") }
    require((try? decode(again)) == value, "\(T.self) \(value) does not decode from its own bytes \(again)")
}

func decodeAll(_ b: [UInt8]) {
    decoded(b, SecureDFURequest.init(bytes:), \.bytes)
    decoded(b, SecureDFUResponse.init(bytes:), \.bytes)
    decoded(b, ButtonlessMessage.init(bytes:), \.bytes)
    decoded(b, exact: false, LegacyDFURequest.init(bytes:), \.bytes)
    decoded(b, LegacyDFUNotification.init(bytes:), \.bytes)
    decoded(b, LegacyImageSizes.init(bytes:), \.bytes)
    decoded(b, MicrobitAppInitPacket.init(bytes:), \.bytes)
    decoded(b, LegacyInitPacket.init(bytes:), \.bytes)
}

/// Little-endian fields read from the input, zeros past its end.
struct Fields {
    let bytes: [UInt8]
    var at = 0
    mutating func u8() -> UInt8 { defer { at += 1 }; return at < bytes.count ? bytes[at] : 0 }
    mutating func u16() -> UInt16 { UInt16(u8()) | UInt16(u8()) << 8 }
    mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }
}

func roundTrip<T: Equatable>(_ value: T, _ decode: ([UInt8]) throws -> T, _ encode: (T) -> [UInt8]) {
    let bytes = encode(value)
    do {
        let back = try decode(bytes)
        require(back == value, "\(T.self) \(value) encodes to \(bytes), which decodes to \(back)")
    } catch {
        fatalError("\(T.self) \(value) encodes to \(bytes), which does not decode: \(error)")
    }
}

/// Values of every frame built from the input, in the shapes the encoders produce.
func encodeAndDecode(_ b: [UInt8]) {
    var f = Fields(bytes: b)
    let op = f.u8(), type = f.u8(), result = f.u8(), ext = f.u8()
    let u16 = f.u16(), u32a = f.u32(), u32b = f.u32(), u32c = f.u32()
    let parameters = Array(b.dropFirst(min(b.count, 20)).prefix(16))

    let requests: [SecureDFURequest] =
        [
            .create(type: type, size: u32a), .setPRN(u16), .calculateChecksum, .execute, .select(type: type), .abort
        ] + ([0x01, 0x02, 0x03, 0x04, 0x06, 0x0C].contains(op) ? [] : [.other(opcode: op, parameters: parameters)])
    for r in requests { roundTrip(r, SecureDFURequest.init(bytes:), \.bytes) }

    var responses: [SecureDFUResponse] = [
        .selected(maxSize: u32a, offset: u32b, crc: u32c), .checksum(offset: u32a, crc: u32b)
    ]
    if op != 0x03, op != 0x06 { responses.append(.success(opcode: op)) }
    if result == 0x0B { responses.append(.failure(opcode: op, result: result, extended: ext)) }
    if result != 0x01, result != 0x0B { responses.append(.failure(opcode: op, result: result, extended: nil)) }
    for r in responses { roundTrip(r, SecureDFUResponse.init(bytes:), \.bytes) }

    roundTrip(ButtonlessMessage.enterBootloader, ButtonlessMessage.init(bytes:), \.bytes)
    roundTrip(ButtonlessMessage.response(opcode: op, result: result), ButtonlessMessage.init(bytes:), \.bytes)

    var legacy: [LegacyDFURequest] = [
        .start(mode: type), .initParameters(complete: result & 1 == 1), .receiveFirmware, .validate,
        .activateAndReset, .reset, .reportSize, .packetReceiptRequest(u16)
    ]
    if !(0x01...0x08).contains(op) { legacy.append(.other(opcode: op, parameters: parameters)) }
    for r in legacy { roundTrip(r, LegacyDFURequest.init(bytes:), \.bytes) }

    var notifications: [LegacyDFUNotification] = [.imageSize(u32a), .receipt(bytesReceived: u32b)]
    if !(type == 0x07 && result == 0x01) { notifications.append(.response(opcode: type, status: result)) }
    for n in notifications { roundTrip(n, LegacyDFUNotification.init(bytes:), \.bytes) }

    roundTrip(
        LegacyImageSizes(softDevice: u32a, bootloader: u32b, application: u32c), LegacyImageSizes.init(bytes:), \.bytes)
    roundTrip(
        LegacyInitPacket(
            deviceType: u16, deviceRevision: UInt16(truncatingIfNeeded: u32a), applicationVersion: u32b,
            softDevice: UInt16(truncatingIfNeeded: u32c), crc16: UInt16(truncatingIfNeeded: u32c >> 16)),
        LegacyInitPacket.init(bytes:), \.bytes)
    let hash = (0..<32).map { UInt8(truncatingIfNeeded: Int(ext) &* 31 &+ $0 &* 7) }
    roundTrip(
        MicrobitAppInitPacket(version: u32a, applicationSize: u32b, hashSize: u32c, storedHash: hash),
        MicrobitAppInitPacket.init(bytes:), \.bytes)

    // The init packets clients build for an application (the input after the fields).
    let application = Array(b.dropFirst(min(b.count, 16)))
    let secure = MicrobitAppInitPacket(application: application)
    require(
        secure.applicationSize == UInt32(application.count) && secure.hashSize == 32 && secure.storedHash.count == 32,
        "init command for \(application.count) bytes: \(secure)")
    require(secure.sha256 == secure.storedHash.reversed(), "the stored hash is not the SHA-256 reversed")
    roundTrip(secure, MicrobitAppInitPacket.init(bytes:), \.bytes)
    let old = LegacyInitPacket(application: application)
    require(old.crc16 == referenceCRC16(application), "legacy init packet CRC \(old.crc16)")
    roundTrip(old, LegacyInitPacket.init(bytes:), \.bytes)
}

/// Bitwise CRC-32/ISO-HDLC (no table).
func referenceCRC32(_ bytes: [UInt8]) -> UInt32 {
    var c: UInt32 = 0xFFFF_FFFF
    for b in bytes {
        c ^= UInt32(b)
        for _ in 0..<8 { c = c & 1 == 1 ? (c >> 1) ^ 0xEDB8_8320 : c >> 1 }
    }
    return ~c
}

/// Bitwise CRC-16/CCITT-FALSE, written from the parameters (poly 0x1021, init 0xFFFF).
func referenceCRC16(_ bytes: [UInt8]) -> UInt16 {
    var c: UInt32 = 0xFFFF
    for b in bytes {
        for bit in (0..<8).reversed() {
            let top = (c >> 15) & 1 ^ UInt32((b >> UInt8(bit)) & 1)
            c = (c << 1) & 0xFFFF
            if top == 1 { c ^= 0x1021 }
        }
    }
    return UInt16(c)
}

func checksums(_ bytes: [UInt8], cut: Int) {
    let whole = CRC32.checksum(bytes)
    require(whole == referenceCRC32(bytes), "CRC32 of \(bytes.count) bytes differs from the bitwise reference")
    var running = CRC32()
    var at = 0, step = cut % 17 + 1
    while at < bytes.count {
        let end = min(bytes.count, at + step)
        running.update(bytes[at..<end])
        at = end
        step = Int(bytes[end - 1]) % 17 + 1
    }
    require(running.value == whole, "CRC32 in pieces \(running.value) != \(whole)")
    require(CRC16.ccittFalse(bytes) == referenceCRC16(bytes), "CRC16 differs from the bitwise reference")
}

/// A memory image from the input (segments of input bytes near the application range) and
/// the application a Nordic DFU would send from it.
func cutApplication(_ bytes: [UInt8], family: ChipFamily) {
    let range = DFUApplication.range(for: family)
    var f = Fields(bytes: bytes)
    var segments: [MemoryImage.Segment] = []
    let count = Int(f.u8() % 5)
    for _ in 0..<count {
        // Addresses around both ends of the range, and far inside it (too-large images).
        let anchor: [UInt32] = [
            range.lowerBound, range.upperBound, range.lowerBound + 0x24000, range.lowerBound + 0x58000
        ]
        let base = anchor[Int(f.u8() % 4)]
        let address = base &- 0x200 &+ UInt32(f.u16() % 0x400)
        let length = Int(f.u8() % 48)
        segments.append(MemoryImage.Segment(start: address, bytes: (0..<length).map { _ in f.u8() }))
    }
    let image = MemoryImage(segments: segments)
    let cut: DFUApplication
    switch Result(catching: { try DFUApplication.cut(from: image, family: family) }) {
    case let .success(application):
        cut = application
    case let .failure(error):
        switch error as? NordicDFUError {
        case let .noApplication(f)?:
            require(f == family && !image.hasData(in: range), "noApplication for an image with data in the range")
        case let .applicationTooLarge(size, maximum)?:
            require(
                size > maximum && maximum == DFUApplication.maximumSize(for: family), "too large: \(size) of \(maximum)"
            )
        default:
            fatalError("DFUApplication.cut threw \(error)")
        }
        return
    }
    require(cut.family == family && cut.start == range.lowerBound, "cut at 0x\(String(cut.start, radix: 16))")
    require(
        !cut.bytes.isEmpty && cut.bytes.count % 4 == 0 && cut.bytes.count <= DFUApplication.maximumSize(for: family),
        "cut of \(cut.bytes.count) bytes")
    let end = cut.start + UInt32(cut.bytes.count)
    // The image's bytes, with 0xFF in the gaps.
    require(cut.bytes == image.read(cut.start..<end, fill: 0xFF), "the cut is not the image with 0xFF in the gaps")
    require(
        image.hasData(in: (end - 4)..<end) && !image.hasData(in: end..<range.upperBound),
        "the cut ends at 0x\(String(end, radix: 16)), not just after the last byte of data")
}

/// `precondition` that keeps its message in release builds.
func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line)
{
    if !condition { fatalError(message(), file: file, line: line) }
}
