import Crypto
import Diagnostics

/// A DFU `.zip` as firmware: exactly the application image its manifest describes, at the address
/// its format implies, or a refusal.
///
/// * McuMgr style (`files: [...]`): the application of image 0 must be an MCUboot image; its header
///   is checked as for an MCUboot file (magic, `img_size` within the file, TLVs).
/// * Nordic style (`manifest.application`): `application.bin` is what the bootloader writes from the
///   application start (docs/protocols/nordic-dfu.md §2.7, §3.4), so the init packet (`dat_file`) decides the
///   board family: the 56-byte `microbit_app` command is the Secure DFU bootloader's of micro:bit V2
///   and Calliope mini 3 (nRF52833, from 0x1C000), the 14-byte legacy packet the SDK 8 bootloader's
///   of micro:bit V1 and Calliope mini 1/2 (nRF51822, from 0x18000). The packet must match the
///   binary: its size and SHA-256 (`microbit_app`) or its CRC-16 (legacy).
///
/// Parts bitflash does not flash (a SoftDevice, a bootloader, another MCUboot image) are kept in
/// `dfuPackage`; `Firmware.problems(for:)` refuses to flash such a package.
extension Firmware {
    static func dfuPackageFirmware(_ package: DFUPackage, fileName: String) throws -> Firmware {
        var firmware: Firmware
        switch package.style {
        case .mcuManager:
            guard let app = package.images.first(where: { $0.role == .application && $0.imageIndex == 0 }) else {
                throw FirmwareImageError.dfuNoApplication(parts: package.images.map(Self.partName))
            }
            let image: MCUbootImage
            do { image = try MCUbootImage(bytes: app.bytes) } catch let error as FirmwareImageError {
                throw FirmwareImageError.dfuNotMCUboot(name: app.name, reason: error.message)
            }
            firmware = try mcubootFirmware(image, fileName: fileName, format: .dfuPackage)
        case .nordicDFU:
            guard let app = package.images.first(where: { $0.role == .application }) else {
                throw FirmwareImageError.dfuNoApplication(parts: package.images.map(Self.partName))
            }
            let (family, warnings) = try NordicInitPacket.check(app)
            var image = MemoryImage()
            try image.write(app.bytes, at: family.layout.applicationStart)
            firmware = Firmware(
                fileName: fileName, format: .dfuPackage,
                sections: [Section(family: family, image: image, warnings: warnings)])
        }
        firmware.dfuPackage = package
        return firmware
    }

    /// `softdevice.bin (SoftDevice)`.
    static func partName(_ image: DFUPackage.Image) -> String {
        image.imageIndex == 0
            ? "\(image.name) (\(image.role))" : "\(image.name) (\(image.role), image \(image.imageIndex))"
    }
}

/// What a Nordic DFU package's init packet says about its binary (docs/protocols/nordic-dfu.md §2.7, §3.4).
enum NordicInitPacket {
    /// The 56-byte `microbit_app` command: magic, version, app_size, hash_size, reversed SHA-256.
    case microbitApp(version: UInt32, applicationSize: UInt32, hashSize: UInt32, sha256: [UInt8])
    /// The legacy packet: device type and revision, application version, the SoftDevices it
    /// accepts (FWIDs), then the CRC-16/CCITT-FALSE of the binary.
    case legacy(softDevices: [UInt16], crc16: UInt16)

    static let microbitAppMagic = Array("microbit_app".utf8)
    /// FWID of S110 8.0.0 (micro:bit V1, Calliope mini 1/2) and the wildcard "any SoftDevice".
    static let acceptedLegacySoftDevices: Set<UInt16> = [0x0064, 0xFFFE]

    init(bytes: [UInt8], name: String) throws {
        if bytes.count == 56, Array(bytes.prefix(12)) == Self.microbitAppMagic {
            self = try .microbitApp(
                version: LEBytes.u32(bytes, 12), applicationSize: LEBytes.u32(bytes, 16),
                hashSize: LEBytes.u32(bytes, 20), sha256: Array(bytes[24..<56]).reversed())
            return
        }
        if bytes.count >= 14, bytes.count <= 64 {
            let n = try Int(LEBytes.u16(bytes, 8))
            if n >= 1, bytes.count >= 10 + 2 * n + 2 {
                self = try .legacy(
                    softDevices: (0..<n).map { try LEBytes.u16(bytes, 10 + 2 * $0) },
                    crc16: LEBytes.u16(bytes, 10 + 2 * n))
                return
            }
        }
        throw FirmwareImageError.dfuUnknownInitPacket(name: name, size: bytes.count)
    }

    /// The family the package is for, and what to tell the user; throws when the packet does not
    /// match the binary or asks for what these boards' bootloaders refuse.
    static func check(_ app: DFUPackage.Image) throws -> (ChipFamily, [FirmwareWarning]) {
        guard let bytes = app.initPacket else { throw FirmwareImageError.dfuUnknownInitPacket(name: nil, size: 0) }
        let datName = "the init packet of \(app.name)"
        func mismatch(_ problem: String) -> FirmwareImageError {
            .dfuInitPacketMismatch(bin: app.name, problem: problem)
        }
        let family: ChipFamily
        var warnings: [FirmwareWarning] = []
        switch try NordicInitPacket(bytes: bytes, name: datName) {
        case let .microbitApp(version, size, hashSize, sha256):
            family = .nrf52833
            guard version == 1 else {
                throw mismatch("its microbit_app command has version \(version); the bootloader accepts version 1 only")
            }
            guard size != 0 else { throw mismatch("it gives an application size of 0, which the bootloader refuses") }
            guard Int(size) == app.bytes.count else {
                throw mismatch(
                    "it says the binary is \(grouped(Int(size))) bytes; \(app.name) is \(grouped(app.bytes.count))")
            }
            if hashSize == 0 {
                warnings.append(
                    .note(
                        "the init packet carries no hash (hash_size 0), so \(app.name) could not be checked against it")
                )
            } else {
                let actual = Array(SHA256.hash(data: app.bytes))
                guard actual == sha256 else {
                    throw mismatch(
                        "its SHA-256 is \(Hex.bytes(sha256.prefix(8)))…, the binary's \(Hex.bytes(actual.prefix(8)))…")
                }
            }
        case let .legacy(softDevices, crc16):
            family = .nrf51
            guard softDevices.contains(where: acceptedLegacySoftDevices.contains) else {
                let listed = softDevices.map { Hex.number($0, digits: 4) }.joined(separator: ", ")
                throw FirmwareImageError.dfuWrongSoftDevice(listed: listed)
            }
            guard app.bytes.count % 4 == 0 else {
                throw mismatch(
                    "\(app.name) is \(grouped(app.bytes.count)) bytes, not a multiple of 4 as the legacy bootloader needs"
                )
            }
            let actual = crc16CCITTFalse(app.bytes)
            guard actual == crc16 else {
                throw mismatch(
                    "its CRC-16 is \(Hex.number(crc16, digits: 4)), the binary's \(Hex.number(actual, digits: 4))")
            }
        }
        let layout = family.layout
        let room = Int(layout.applicationEnd - layout.applicationStart)
        guard !app.bytes.isEmpty, app.bytes.count <= room else {
            throw FirmwareImageError.dfuApplicationTooLarge(name: app.name, size: app.bytes.count, family: family)
        }
        return (family, warnings)
    }
}

/// CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR): the
/// legacy init packet's checksum of the binary (docs/protocols/nordic-dfu.md §3.4).
func crc16CCITTFalse(_ bytes: [UInt8]) -> UInt16 {
    var crc: UInt16 = 0xFFFF
    for b in bytes {
        crc ^= UInt16(b) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
    }
    return crc
}
