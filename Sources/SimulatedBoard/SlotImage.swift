import Crypto

/// What the server reads from an MCUboot image in a slot: its header fields and the
/// SHA-256 TLV (mcumgr-smp.md §5). Bad or missing images yield nil; nothing traps.
struct SlotImageInfo: Sendable, Equatable {
    var version: String
    var hash: [UInt8]
    /// Header + body + protected TLVs + unprotected TLVs.
    var totalSize: Int
    /// The SHA-256 of header, body and protected TLVs matches the hash TLV (what MCUboot
    /// checks before it swaps an image in).
    var intact: Bool

    /// Reads the image at the start of `read(offset, count)`, within `limit` bytes.
    init?(limit: Int, read: (Int, Int) -> [UInt8]?) {
        guard let h = read(0, 32), h.count == 32, Self.u32(h, 0) == 0x96F3_B83D else { return nil }
        let headerSize = Int(Self.u16(h, 8)), protected = Int(Self.u16(h, 10)), body = Int(Self.u32(h, 12))
        let tlvStart = headerSize + body + protected
        guard headerSize >= 32, tlvStart + 4 <= limit, let info = read(tlvStart, 4), info.count == 4,
              Self.u16(info, 0) == 0x6907 else { return nil }
        let total = Int(Self.u16(info, 2))
        guard total >= 4, tlvStart + total <= limit, let tlvs = read(tlvStart, total), tlvs.count == total else { return nil }
        var at = 4
        var found: [UInt8]?
        while at + 4 <= total {
            let type = Self.u16(tlvs, at), length = Int(Self.u16(tlvs, at + 2))
            guard at + 4 + length <= total else { return nil }
            if type == 0x10 {
                guard length == 32, found == nil else { return nil }
                found = Array(tlvs[(at + 4)..<(at + 36)])
            }
            at += 4 + length
        }
        guard let hash = found, let hashed = read(0, tlvStart), hashed.count == tlvStart else { return nil }
        intact = Array(SHA256.hash(data: hashed)) == hash
        let build = Self.u32(h, 24)
        self.version = "\(h[20]).\(h[21]).\(Self.u16(h, 22))" + (build == 0 ? "" : ".\(build)")
        self.hash = hash
        self.totalSize = tlvStart + total
    }

    static func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    static func u32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(u16(b, i)) | UInt32(u16(b, i + 2)) << 16 }
}

/// A minimal unsigned MCUboot image for the simulated McuMgr board: the 32-byte header
/// padded to `headerSize`, the payload, and an unprotected TLV area with the SHA-256 TLV,
/// as `imgtool sign --pad-header` without a key makes it.
public struct SimulatedMCUbootImage: Sendable, Equatable {
    /// The image file.
    public let bytes: [UInt8]
    /// The SHA-256 TLV: what the device reports and what test and confirm name.
    public let hash: [UInt8]
    /// SHA-256 of the whole file (the upload's `sha`).
    public let fileSHA256: [UInt8]

    /// Wraps `payload` (built to run at the primary slot + `headerSize`).
    public init(payload: [UInt8], version: (UInt8, UInt8, UInt16, UInt32) = (1, 0, 0, 0), headerSize: Int = 0x1000) {
        var header = [UInt8](repeating: 0, count: max(headerSize, 32))
        func put32(_ v: UInt32, _ at: Int) { for i in 0..<4 { header[at + i] = UInt8(truncatingIfNeeded: v >> (8 * i)) } }
        func put16(_ v: UInt16, _ at: Int) { for i in 0..<2 { header[at + i] = UInt8(truncatingIfNeeded: v >> (8 * i)) } }
        put32(0x96F3_B83D, 0)
        put16(UInt16(clamping: headerSize), 8)
        put32(UInt32(clamping: payload.count), 12)
        header[20] = version.0
        header[21] = version.1
        put16(version.2, 22)
        put32(version.3, 24)
        let signed = header + payload
        let hash = Array(SHA256.hash(data: signed))
        let tlvs: [UInt8] = [0x07, 0x69, 40, 0, 0x10, 0x00, 32, 0] + hash
        bytes = signed + tlvs
        self.hash = hash
        fileSHA256 = Array(SHA256.hash(data: bytes))
    }
}
