import Crypto
import Diagnostics
import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

/// A DFU zip read as firmware gives exactly the image its manifest describes, where its format
/// puts it, or is refused: a Nordic package's binary lands at the application start of the family
/// its init packet is for (docs/protocols/nordic-dfu.md §2.7, §3.4) and must match that packet; a McuMgr
/// package's application must be a valid MCUboot image.
@Suite struct DFUPackageFirmwareTests {
    /// The binary the reference clients cut from an image (docs/protocols/nordic-dfu.md §4): from the
    /// application start to the highest data byte below the bootloader, rounded up to 4, gaps 0xFF.
    static func applicationBinary(_ image: MemoryImage, _ family: ChipFamily) throws -> [UInt8] {
        let layout = family.layout
        let end = try #require(image.slice(layout.application).span?.upperBound)
        let length = (Int(end - layout.applicationStart) + 3) & ~3
        return image.read(layout.applicationStart..<(layout.applicationStart + UInt32(length)))
    }

    /// The 56-byte `microbit_app` command, written out field by field as §2.7 lays it out.
    static func microbitApp(
        _ bin: [UInt8], version: UInt32 = 1, size: Int? = nil, hashSize: UInt32 = 32, hash: [UInt8]? = nil
    ) -> [UInt8] {
        func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        return Array("microbit_app".utf8) + le32(version) + le32(UInt32(size ?? bin.count)) + le32(hashSize)
            + (hash ?? Array(SHA256.hash(data: bin))).reversed()
    }

    /// The 14-byte legacy packet of §3.4: device type and revision FFFF, version FFFFFFFF, one SoftDevice, CRC-16.
    static func legacy(crc: UInt16, softDevice: UInt16 = 0x0064) -> [UInt8] {
        [
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00, UInt8(softDevice & 0xFF),
            UInt8(softDevice >> 8),
            UInt8(crc & 0xFF), UInt8(crc >> 8)
        ]
    }

    static func nordic(_ bin: [UInt8], _ dat: [UInt8]?) throws -> Firmware {
        var files: [(String, [UInt8])] = [("application.bin", bin)]
        var part = #""bin_file": "application.bin""#
        if let dat {
            files.append(("application.dat", dat))
            part += #", "dat_file": "application.dat""#
        }
        let manifest = #"{"manifest": {"application": {"# + part + "}}}"
        return try Firmware.parse(try makeZip([("manifest.json", Array(manifest.utf8))] + files), fileName: "app.zip")
    }

    static let v2 = HexFixtures.makeCode(.nrf52833, seed: 71).image
    static let v1 = HexFixtures.makeCode(.nrf51, seed: 72).image

    @Test func crc16IsTheCCITTFalseVariant() {
        #expect(crc16CCITTFalse(Array("123456789".utf8)) == 0x29B1)
    }

    @Test func aSecureDFUPackagePutsItsBinaryAtTheNRF52833ApplicationStart() throws {
        let bin = try Self.applicationBinary(Self.v2, .nrf52833)
        let firmware = try Self.nordic(bin, Self.microbitApp(bin))
        #expect(firmware.format == .dfuPackage)
        let section = try firmware.section(for: .microbitV2)
        #expect(section.family == .nrf52833)
        #expect(section.image.runs == [0x1C000..<(0x1C000 + UInt32(bin.count))])
        // The board's application region, as the hex has it.
        #expect(
            section.image.read(0x1C000..<0x77000)
                == Self.v2.slice(0x1C000..<(0x1C000 + UInt32(bin.count))).read(0x1C000..<0x77000))
        #expect(try firmware.section(for: .calliopeMini3) == section)
        #expect(throws: FirmwareImageError.self) { try firmware.section(for: .microbitV1) }
    }

    @Test func aLegacyPackagePutsItsBinaryAtTheNRF51ApplicationStart() throws {
        let bin = try Self.applicationBinary(Self.v1, .nrf51)
        let firmware = try Self.nordic(bin, Self.legacy(crc: crc16CCITTFalse(bin)))
        let section = try firmware.section(for: .calliopeMini2)
        #expect(section.family == .nrf51)
        #expect(section.image.runs == [0x18000..<(0x18000 + UInt32(bin.count))])
        #expect(throws: FirmwareImageError.self) { try firmware.section(for: .microbitV2) }
        // The wildcard SoftDevice 0xFFFE is accepted too.
        #expect(throws: Never.self) { try Self.nordic(bin, Self.legacy(crc: crc16CCITTFalse(bin), softDevice: 0xFFFE)) }
    }

    @Test func aPacketWithoutAHashIsAcceptedWithAWarning() throws {
        let bin = try Self.applicationBinary(Self.v2, .nrf52833)
        let firmware = try Self.nordic(bin, Self.microbitApp(bin, hashSize: 0, hash: [UInt8](repeating: 0, count: 32)))
        #expect(firmware.allWarnings.contains { $0.description.contains("hash_size 0") })
    }

    @Test func anInitPacketThatDoesNotDescribeTheBinaryIsRefused() throws {
        let bin = try Self.applicationBinary(Self.v2, .nrf52833)
        let other = try Self.applicationBinary(
            HexFixtures.makeCode(.nrf52833, programSize: 6000, seed: 73).image, .nrf52833)
        func problem(_ dat: [UInt8], _ body: [UInt8] = bin) -> String? {
            do { _ = try Self.nordic(body, dat); return nil } catch let FirmwareImageError.dfuInitPacketMismatch(
                _, problem)
            {
                return problem
            } catch { return "\(error)" }
        }
        #expect(
            problem(Self.microbitApp(other))
                == "it says the binary is \(grouped(other.count)) bytes; application.bin is \(grouped(bin.count))")
        #expect(
            problem(Self.microbitApp(bin, hash: Array(SHA256.hash(data: other))))?.hasPrefix("its SHA-256 is ") == true)
        #expect(
            problem(Self.microbitApp(bin, version: 2))
                == "its microbit_app command has version 2; the bootloader accepts version 1 only")
        let v1bin = try Self.applicationBinary(Self.v1, .nrf51)
        #expect(problem(Self.legacy(crc: crc16CCITTFalse(v1bin) ^ 1), v1bin)?.hasPrefix("its CRC-16 is ") == true)
        #expect(
            problem(Self.legacy(crc: crc16CCITTFalse(v1bin + [1])), v1bin + [1])?.contains("not a multiple of 4")
                == true)
    }

    @Test func aPackageThatDoesNotSayWhichBoardItIsForIsRefused() throws {
        let bin = try Self.applicationBinary(Self.v2, .nrf52833)
        #expect(throws: FirmwareImageError.dfuUnknownInitPacket(name: nil, size: 0)) { try Self.nordic(bin, nil) }
        #expect(throws: FirmwareImageError.dfuUnknownInitPacket(name: "the init packet of application.bin", size: 3)) {
            try Self.nordic(bin, [1, 2, 3])
        }
        // A legacy packet for another SoftDevice (S140 6.1.1, FWID 0x00B6) is for another board.
        let v1bin = try Self.applicationBinary(Self.v1, .nrf51)
        #expect(throws: FirmwareImageError.dfuWrongSoftDevice(listed: "0x00B6")) {
            try Self.nordic(v1bin, Self.legacy(crc: crc16CCITTFalse(v1bin), softDevice: 0x00B6))
        }
    }

    @Test func aBinaryThatWouldReachTheBootloaderIsRefused() throws {
        let bin = [UInt8](repeating: 0x5A, count: 0x24004)  // nRF51: 0x18000 + 0x24004 passes 0x3C000
        #expect(
            throws: FirmwareImageError.dfuApplicationTooLarge(name: "application.bin", size: bin.count, family: .nrf51)
        ) {
            try Self.nordic(bin, Self.legacy(crc: crc16CCITTFalse(bin)))
        }
    }

    @Test func aMcuMgrPackageMustHoldAnMCUbootImage() throws {
        let image = try MCUbootImage.build(
            application: [UInt8](repeating: 0xA5, count: 4000), version: MCUbootVersion(major: 1),
            headerSize: 0x1000)
        func package(_ bytes: [UInt8], type: String = "application") throws -> [UInt8] {
            try makeZip([
                (
                    "manifest.json",
                    Array(#"{"files": [{"file": "app.bin", "type": "\#(type)", "image_index": "0"}]}"#.utf8)
                ),
                ("app.bin", bytes)
            ])
        }
        let good = try Firmware.parse(try package(image), fileName: "ok.zip")
        #expect(good.mcuboot?.bytes == image)
        // img_size 0xFFFFFFFF: the header announces more than the file holds.
        var huge = image
        huge.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0xFF])
        let error = #expect(throws: FirmwareImageError.self) {
            try Firmware.parse(try package(huge), fileName: "huge.zip")
        }
        guard case .dfuNotMCUboot(let name, let reason) = error else {
            Issue.record("expected dfuNotMCUboot, got \(String(describing: error))")
            return
        }
        #expect(name == "app.bin" && reason.contains("truncated"), "\(reason)")
        // Raw bytes are not an application for a McuMgr package.
        #expect(throws: FirmwareImageError.self) {
            try Firmware.parse(try package([UInt8](repeating: 0, count: 4000)), fileName: "raw.zip")
        }
        // A package of a bootloader only holds nothing bitflash flashes.
        #expect(throws: FirmwareImageError.dfuNoApplication(parts: ["app.bin (bootloader)"])) {
            try Firmware.parse(try package(image, type: "bootloader"), fileName: "bl.zip")
        }
    }

    @Test func partsBesidesTheApplicationAreAProblemForceDoesNotOverride() throws {
        let app = try MCUbootImage.build(
            application: BoardCompatibilityTests.v2Application(4000), version: MCUbootVersion(major: 1),
            headerSize: 0x1000)
        let net = try MCUbootImage.build(
            application: [UInt8](repeating: 0x5A, count: 1500), version: MCUbootVersion(major: 1), headerSize: 0x1000)
        let manifest = #"{"files": [{"file": "app.bin", "image_index": "0"}, {"file": "net.bin", "image_index": "1"}]}"#
        let firmware = try Firmware.parse(
            try makeZip([("manifest.json", Array(manifest.utf8)), ("app.bin", app), ("net.bin", net)]),
            fileName: "two.zip")
        let problems = firmware.problems(for: .microbitV2)
        #expect(problems.map(\.kind) == [.packageParts])
        #expect(problems.first?.overridable == false)
        #expect(problems.first?.message.contains("net.bin (application, image 1)") == true)
    }
}

/// What says a file is not for a board, found in the file: UF2 family IDs, data where the chip has
/// no memory, a SoftDevice that reaches into the application region, an MCUboot image that does not
/// fit the slot. And no problem at all for the real micro:bit and Calliope mini files.
@Suite struct BoardCompatibilityTests {
    /// `count` bytes of a micro:bit V2 application: a vector table whose stack is the top of the
    /// nRF52833's RAM and whose reset handler lies 8 bytes into the application at 0x1C000.
    static func v2Application(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        LEBytes.put(&out, UInt32(0x2002_0000))
        LEBytes.put(&out, UInt32(0x1_C009))
        return out + [UInt8](repeating: 0xA5, count: max(0, count - 8))
    }

    @Test func aUF2ForAnotherFamilyIsAProblemForceMayOverride() throws {
        let image = HexFixtures.makeCode(.nrf52833, small: true, seed: 3).image.slice(0..<0x80000)
        for family: UInt32 in [0xDEAD_BEEF, UF2Family.nrf52840] {
            let firmware = try Firmware.parse(UF2File.encode(image, familyID: family), fileName: "x.uf2")
            let problems = firmware.problems(for: .microbitV2)
            #expect(problems.map(\.kind) == [.uf2Family])
            #expect(problems.first?.overridable == true)
            #expect(problems.first?.message.contains("needs 0x621E937A (nRF52833)") == true, "\(problems)")
        }
        let right = try Firmware.parse(UF2File.encode(image, familyID: UF2Family.nrf52833), fileName: "x.uf2")
        #expect(right.problems(for: .microbitV2).isEmpty)
        #expect(right.problems(for: .calliopeMini3).isEmpty)
    }

    @Test func dataBeyondTheChipsMemoryIsAProblemForceDoesNotOverride() throws {
        var image = HexFixtures.makeCode(.nrf51, small: true, seed: 4).image
        try image.write([1, 2, 3, 4], at: 0x40000)  // past nRF51's 256 KiB
        let problems = Firmware.memoryProblems(image, board: .microbitV1)
        #expect(problems.map(\.kind) == [.outsideMemory])
        #expect(problems.first?.overridable == false)
        #expect(problems.first?.message.contains("first 0x00040000-0x00040004") == true, "\(problems)")
        // UICR words are fine; so is the whole flash.
        try image.write([5, 6, 7, 8], at: 0x1000_10C0)
        #expect(Firmware.memoryProblems(image.slice(0..<0x40000), board: .microbitV1).isEmpty)
        #expect(Firmware.memoryProblems(image.slice(0x1000_0000..<0x1000_2000), board: .microbitV1).isEmpty)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func theNRF52840SoftDeviceIsNotForAMicrobit() throws {
        for path in ["real/uf2-nrf52840-s140-softdevice-6.1.1.uf2", "real/nrf52840-s140-softdevice-6.1.1.hex"] {
            let firmware = try Firmware.parse(try Corpus.bytes(path), fileName: path)
            for board in [Board.microbitV2, .microbitV1] {
                let problems = firmware.problems(for: board)
                let softDevice = try #require(problems.first { $0.kind == .softDevice }, "\(path) \(board)")
                #expect(!softDevice.overridable)
                #expect(softDevice.message.contains("(FWID 0x00B6) that ends at 0x00026000"), "\(softDevice.message)")
            }
        }
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func mcubootImagesForOtherBoardsAreProblems() throws {
        let dk = try MCUbootImage(bytes: try Corpus.bytes("real/mcuboot-nrf52840dk-smp-ble-ecdsa.signed.bin"))
        #expect(dk.problems(for: .microbitV2).map(\.kind) == [.mcubootLayout])
        #expect(dk.problems(for: .microbitV2).allSatisfy { $0.overridable })
        // 225,131 bytes do not fit the nRF51's slot (0x17C00-0x3B400), and its stack (0x2000A480)
        // lies beyond the nRF51's 32 KiB of RAM.
        #expect(dk.problems(for: .microbitV1).map(\.kind) == [.mcubootSlot, .mcubootLayout, .vectorTable])
        let ram = try MCUbootImage(bytes: try Corpus.bytes("real/mcuboot-mps2-ram-load-sha256-only.signed.bin"))
        #expect(ram.problems(for: .microbitV2).contains { $0.kind == .mcubootSlot && !$0.overridable })
        // The board's own layout: a one-page header, in the slot.
        let own = try MCUbootImage(
            bytes: try MCUbootImage.build(
                application: BoardCompatibilityTests.v2Application(16), version: MCUbootVersion(major: 1),
                headerSize: 0x1000))
        #expect(own.problems(for: .microbitV2).isEmpty)
        #expect(own.problems(for: .microbitV2, address: 0xC000).map(\.kind) == [.mcubootLayout])
        var fixed = try MCUbootImage.build(
            application: BoardCompatibilityTests.v2Application(16), loadAddress: 0xC000,
            version: MCUbootVersion(major: 1),
            headerSize: 0x1000, flags: .romFixed)
        #expect(try MCUbootImage(bytes: fixed).problems(for: .microbitV2).map(\.kind) == [.mcubootSlot])
        fixed = try MCUbootImage.build(
            application: BoardCompatibilityTests.v2Application(16), loadAddress: 0x1B000,
            version: MCUbootVersion(major: 1),
            headerSize: 0x1000, flags: .romFixed)
        #expect(try MCUbootImage(bytes: fixed).problems(for: .microbitV2).isEmpty)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func noRealMicrobitOrCalliopeFileHasAProblemForItsBoards() throws {
        var checked = 0
        for folder in ["real", "derived"] {
            let names = try FileManager.default.contentsOfDirectory(
                atPath: Corpus.testdata.appendingPathComponent(folder).path)
            for name in names.sorted() where name.hasSuffix(".hex") || name.hasSuffix(".uf2") {
                guard let firmware = try? Firmware.parse(try Corpus.bytes("\(folder)/\(name)"), fileName: name) else {
                    continue
                }
                for board in Board.allCases {
                    guard let section = try? firmware.section(for: board), section.family == board.family,
                        MakeCodeProgram.find(in: section.image, family: board.family) != nil
                            || MicroPythonLayout.find(in: section.image, family: board.family) != nil
                    else { continue }
                    #expect(
                        firmware.problems(for: board).isEmpty, "\(name) on \(board): \(firmware.problems(for: board))")
                    checked += 1
                }
            }
        }
        #expect(checked > 60)
    }
}
