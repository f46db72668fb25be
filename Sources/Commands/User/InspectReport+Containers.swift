import Diagnostics
import FirmwareImage
import Foundation

/// What `inspect` shows of the binary containers: an MCUboot image's header and hash check,
/// a UF2 file's family IDs, a DFU zip's images.
extension InspectReport {
    /// An MCUboot image: header fields, TLVs and whether its image hash is right.
    struct MCUboot: Codable, Equatable {
        var version: String
        var loadAddress: String
        var headerSize: Int
        var imageSize: Int
        var protectedTLVSize: Int
        /// Header, body and TLV areas.
        var length: Int
        var flags: String
        var tlvs: [String]
        /// The SHA-256 TLV: what the device will report as the image hash.
        var imageHash: String?
        /// True when the hash TLV matches the bytes.
        var hashValid: Bool
        /// `valid`, `mismatch: the bytes hash to …`, `absent` or `not checkable: …`.
        var hashCheck: String

        init(_ image: MCUbootImage) {
            let h = image.header
            version = image.version.description
            loadAddress = Hex.address(h.loadAddress)
            headerSize = Int(h.headerSize)
            imageSize = Int(h.imageSize)
            protectedTLVSize = Int(h.protectedTLVSize)
            length = image.length
            flags = Hex.address(h.flags.rawValue)
            tlvs = (image.protectedTLVs + image.unprotectedTLVs).map { tlv in
                let area = tlv.area == .protected ? "protected" : "unprotected"
                return "type \(Hex.number(tlv.type)) (\(tlv.value.count) bytes, \(area))"
            }
            imageHash = image.reportedHash.map { Hex.bytes($0, uppercase: false) }
            switch image.hashCheck {
            case .valid:
                hashValid = true
                hashCheck = "valid"
            case .mismatch(_, let computed):
                hashValid = false
                hashCheck = "mismatch: the bytes hash to \(Hex.bytes(computed, uppercase: false))"
            case .absent:
                hashValid = false
                hashCheck = "absent: the image has no SHA-256 TLV"
            case .notCheckable(let reason):
                hashValid = false
                hashCheck = "not checkable: \(reason)"
            }
        }
    }

    /// One image of a DFU zip.
    struct DFUImage: Codable, Equatable {
        var name: String
        var role: String
        var imageIndex: Int
        var size: Int
        var manifestVersion: String?
        /// Set when the file is an MCUboot image.
        var mcubootVersion: String?
        var mcubootHashValid: Bool?
        var hasInitPacket: Bool

        init(_ image: DFUPackage.Image) {
            name = image.name
            role = image.role.description
            imageIndex = image.imageIndex
            size = image.bytes.count
            manifestVersion = image.version
            let mcuboot = image.mcubootImage
            mcubootVersion = mcuboot?.version.description
            mcubootHashValid = mcuboot.map { $0.hashCheck == .valid }
            hasInitPacket = image.initPacket != nil
        }
    }

    /// `0x621E937A (nRF52833: micro:bit V2, Calliope mini 3)`.
    static func uf2FamilyName(_ id: UInt32) -> String {
        let boards = Board.allCases.filter { $0.family.uf2FamilyID == id }.map(\.displayName)
        let name = UF2Family.name(of: id) ?? "unknown family"
        return
            "\(Hex.address(id)) (\(name)\(boards.isEmpty ? ", no supported board" : ": " + boards.joined(separator: ", ")))"
    }

    /// The rows about the container, after the file line.
    var containerText: String {
        var out = ""
        func row(_ label: String, _ value: String) {
            out += "  " + label.inspectLabel + value + "\n"
        }
        if let families = uf2Families {
            for (k, f) in families.enumerated() { row(k == 0 ? "UF2 families:" : "", f) }
        }
        if let images = dfuImages {
            row("DFU package:", "\(dfuStyle ?? "unknown") style, \(images.count) image\(images.count == 1 ? "" : "s")")
            for image in images {
                var line = "\(image.name): \(image.role), image \(image.imageIndex), \(image.size) bytes"
                if let v = image.manifestVersion { line += ", manifest version \(v)" }
                if let v = image.mcubootVersion {
                    line += ", MCUboot \(v), hash \(image.mcubootHashValid == true ? "valid" : "NOT valid")"
                }
                if image.hasInitPacket { line += ", with init packet" }
                row("", line)
            }
        }
        if let m = mcuboot {
            row("MCUboot version:", m.version)
            row("MCUboot header:", "\(m.headerSize) bytes, load address \(m.loadAddress), flags \(m.flags)")
            row(
                "MCUboot image:",
                "\(m.imageSize) bytes; \(m.length) with header and TLVs"
                    + (m.protectedTLVSize > 0 ? " (\(m.protectedTLVSize) bytes of protected TLVs)" : ""))
            for (k, t) in m.tlvs.enumerated() { row(k == 0 ? "MCUboot TLVs:" : "", t) }
            row("image hash:", m.imageHash ?? "none")
            row("hash check:", m.hashCheck)
        }
        return out
    }
}
