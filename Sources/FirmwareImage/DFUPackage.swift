import Foundation

/// A DFU `.zip` package: `manifest.json` plus the firmware files it names.
///
/// Two manifest styles are read (docs/protocols/mcumgr-smp.md §5.4, docs/protocols/nordic-dfu.md §4):
/// * nRF Connect SDK / McuMgr (`dfu_application.zip`): `files: [{file, image_index, type, …}]`,
///   each file an MCUboot image, uploaded in the order listed;
/// * Nordic legacy / secure DFU (nrfutil): `manifest: {application: {bin_file, dat_file}, …}`,
///   a raw binary plus its init packet.
public struct DFUPackage: Sendable, Equatable {
    /// Which manifest style the package uses.
    public enum Style: String, Sendable {
        /// `files: [...]` entries, MCUboot images for McuMgr/SMP upload.
        case mcuManager
        /// `manifest.application.bin_file/dat_file`, for Nordic (legacy or secure) DFU.
        case nordicDFU
    }

    /// What an image is for.
    public enum Role: Sendable, Equatable, CustomStringConvertible {
        case application
        case softDevice
        case bootloader
        case softDeviceAndBootloader
        /// A role this tool does not act on, as the manifest spells it (e.g. "suit-envelope").
        case other(String)

        init(manifestType: String) {
            switch manifestType.lowercased() {
            case "application", "app": self = .application
            case "softdevice": self = .softDevice
            case "bootloader": self = .bootloader
            case "softdevice_bootloader": self = .softDeviceAndBootloader
            default: self = .other(manifestType)
            }
        }

        public var description: String {
            switch self {
            case .application: return "application"
            case .softDevice: return "SoftDevice"
            case .bootloader: return "bootloader"
            case .softDeviceAndBootloader: return "SoftDevice + bootloader"
            case .other(let s): return s
            }
        }
    }

    /// One firmware image of the package.
    public struct Image: Sendable, Equatable {
        /// The file's name in the zip.
        public var name: String
        public var bytes: [UInt8]
        public var role: Role
        /// The MCUboot image number (0 application core, 1 network core, …); 0 for Nordic DFU.
        public var imageIndex: Int
        /// The slot the manifest names, when it names one.
        public var slot: Int?
        /// The Nordic DFU init packet (`dat_file`), when there is one.
        public var initPacket: [UInt8]?
        public var loadAddress: UInt32?
        /// The version the manifest states (e.g. "1.2.3+4"), when it states one.
        public var version: String?

        public init(
            name: String, bytes: [UInt8], role: Role, imageIndex: Int = 0, slot: Int? = nil,
            initPacket: [UInt8]? = nil, loadAddress: UInt32? = nil, version: String? = nil
        ) {
            self.name = name
            self.bytes = bytes
            self.role = role
            self.imageIndex = imageIndex
            self.slot = slot
            self.initPacket = initPacket
            self.loadAddress = loadAddress
            self.version = version
        }

        /// The image read as MCUboot, or nil when it is not one.
        public var mcubootImage: MCUbootImage? { try? MCUbootImage(bytes: bytes) }
    }

    /// The largest entry accepted: twice the largest micro:bit or Calliope mini flash.
    public static let maxEntrySize = 1 << 20
    /// The most the images and init packets of one package may hold together (a zip bomb, or a
    /// manifest naming one file many times, stops here).
    public static let maxTotalSize = 4 << 20

    public let style: Style
    /// The images in upload order.
    public let images: [Image]

    public init(style: Style, images: [Image]) {
        self.style = style
        self.images = images
    }

    /// True when `bytes` starts with a zip local-file header.
    public static func looksLikeZip(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4 && bytes[0..<4].elementsEqual([0x50, 0x4B, 0x03, 0x04])
    }

    /// Reads a package from the bytes of its `.zip` file.
    ///
    /// The zip's layout is parsed and bounds-checked by `ZipReader`, in memory.
    public init(zipBytes: [UInt8]) throws {
        guard !zipBytes.isEmpty else { throw FirmwareImageError.dfuNotAZip }
        let files = ZipFiles(reader: try ZipReader(bytes: zipBytes))
        guard let manifestBytes = try files.bytes(of: "manifest.json") else {
            throw FirmwareImageError.dfuMissingManifest
        }
        let manifest = try DFUManifest(json: manifestBytes)
        var images: [Image] = []
        var total = 0
        for entry in manifest.entries {
            guard let bytes = try files.bytes(of: entry.file) else {
                throw FirmwareImageError.dfuMissingFile(entry.file)
            }
            var initPacket: [UInt8]?
            if let dat = entry.initPacketFile {
                guard let packet = try files.bytes(of: dat) else { throw FirmwareImageError.dfuMissingFile(dat) }
                initPacket = packet
            }
            total += bytes.count + (initPacket?.count ?? 0)
            if total > Self.maxTotalSize {
                throw FirmwareImageError.dfuEntryTooLarge(name: "*", size: total)
            }
            images.append(
                Image(
                    name: entry.file, bytes: bytes, role: entry.role, imageIndex: entry.imageIndex,
                    slot: entry.slot, initPacket: initPacket, loadAddress: entry.loadAddress,
                    version: entry.version))
        }
        guard !images.isEmpty else { throw FirmwareImageError.dfuNoImages }
        self.init(style: manifest.style, images: images)
    }
}

/// Reads named entries of an archive, with size limits and clear errors.
private struct ZipFiles {
    let reader: ZipReader

    /// The bytes of the file entry at `path` (leading "./" or "/" ignored), or nil when absent.
    func bytes(of path: String) throws -> [UInt8]? {
        guard let entry = reader.entry(named: path) else { return nil }
        return try reader.contents(of: entry, limit: DFUPackage.maxEntrySize)
    }
}
