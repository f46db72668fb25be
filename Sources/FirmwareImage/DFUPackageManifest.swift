import Foundation

/// The parts of a DFU package's `manifest.json` this tool uses, in upload order.
struct DFUManifest {
    struct Entry {
        var file: String
        var initPacketFile: String?
        var role: DFUPackage.Role
        var imageIndex: Int
        var slot: Int?
        var loadAddress: UInt32?
        var version: String?
    }

    var style: DFUPackage.Style
    var entries: [Entry]

    /// Nordic DFU manifest keys, in the order the Nordic libraries send them.
    private static let nordicParts: [(key: String, role: DFUPackage.Role)] = [
        ("softdevice_bootloader", .softDeviceAndBootloader), ("softdevice", .softDevice),
        ("bootloader", .bootloader), ("application", .application)
    ]

    init(json bytes: [UInt8]) throws {
        // Some manifests write `"load_address": 0x…`, which is not JSON: read those
        // values first, then drop them before parsing (as the Nordic iOS library does).
        let text = String(decoding: bytes, as: UTF8.self)
        let (cleaned, hexLoadAddresses) = Self.extractHexLoadAddresses(text)
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(cleaned.utf8))
        } catch {
            throw FirmwareImageError.dfuBadManifest("not valid JSON")
        }
        guard let top = object as? [String: Any] else {
            throw FirmwareImageError.dfuBadManifest("the top level is not an object")
        }
        if let files = top["files"] {
            guard let list = files as? [Any] else { throw FirmwareImageError.dfuBadManifest("'files' is not a list") }
            style = .mcuManager
            entries = try list.enumerated().map { index, item in
                guard let dict = item as? [String: Any] else {
                    throw FirmwareImageError.dfuBadManifest("files[\(index)] is not an object")
                }
                var entry = try Self.mcuManagerEntry(dict, index: index)
                if entry.loadAddress == nil, hexLoadAddresses.count == list.count {
                    entry.loadAddress = hexLoadAddresses[index]
                }
                return entry
            }
        } else if let manifest = top["manifest"] {
            guard let parts = manifest as? [String: Any] else {
                throw FirmwareImageError.dfuBadManifest("'manifest' is not an object")
            }
            style = .nordicDFU
            entries = try Self.nordicParts.compactMap { key, role in
                guard let part = parts[key] else { return nil }
                guard let dict = part as? [String: Any], let bin = dict["bin_file"] as? String else {
                    throw FirmwareImageError.dfuBadManifest("manifest.\(key) has no 'bin_file'")
                }
                return Entry(file: bin, initPacketFile: dict["dat_file"] as? String, role: role, imageIndex: 0)
            }
        } else {
            throw FirmwareImageError.dfuBadManifest("it has neither 'files' (McuMgr) nor 'manifest' (Nordic DFU)")
        }
    }

    private static func mcuManagerEntry(_ dict: [String: Any], index: Int) throws -> Entry {
        guard let file = dict["file"] as? String, !file.isEmpty else {
            throw FirmwareImageError.dfuBadManifest("files[\(index)] has no 'file'")
        }
        // Image number: `image` (int), `image_index` (string or int) or `partition`; default 0.
        let imageIndex = integer(dict["image"]) ?? integer(dict["image_index"]) ?? integer(dict["partition"]) ?? 0
        guard (0...255).contains(imageIndex) else {
            throw FirmwareImageError.dfuBadManifest("files[\(index)] has image number \(imageIndex)")
        }
        let slot = integer(dict["slot"]) ?? integer(dict["slot_index_primary"])
        let load = integer(dict["load_address"]).flatMap { UInt32(exactly: $0) }
        let version =
            (dict["version_MCUBOOT"] as? String) ?? (dict["version_MCUBOOT+XIP"] as? String)
            ?? (dict["version"] as? String)
        return Entry(
            file: file, initPacketFile: nil,
            role: DFUPackage.Role(manifestType: dict["type"] as? String ?? "application"),
            imageIndex: imageIndex, slot: slot, loadAddress: load, version: version)
    }

    /// An integer from a JSON number or a decimal string.
    private static func integer(_ value: Any?) -> Int? {
        switch value {
        case let s as String: return Int(s.trimmingCharacters(in: .whitespaces))
        case let n as NSNumber:
            let d = n.doubleValue
            guard d.rounded() == d, abs(d) < 1e15 else { return nil }
            return Int(d)
        default: return nil
        }
    }

    /// Removes `"load_address": 0x…` members, returning the text and their values in order.
    static func extractHexLoadAddresses(_ text: String) -> (String, [UInt32]) {
        guard let regex = try? NSRegularExpression(pattern: #""load_address"\s*:\s*0[xX]([0-9A-Fa-f]{1,8})\s*,?"#)
        else {
            return (text, [])
        }
        let ns = text as NSString
        let matches = regex.matches(in: text, range: NSRange(location: 0, length: ns.length))
        let values = matches.compactMap { UInt32(ns.substring(with: $0.range(at: 1)), radix: 16) }
        let cleaned = regex.stringByReplacingMatches(
            in: text, range: NSRange(location: 0, length: ns.length), withTemplate: "")
        return (cleaned, values)
    }
}
