import Foundation
import Testing
import ZIPFoundation
@testable import FirmwareImage

/// Makes a zip in memory holding `files` (name → bytes), deflated when `compress`.
func makeZip(_ files: [(String, [UInt8])], compress: Bool = false) throws -> [UInt8] {
    let archive = try Archive(data: Data(), accessMode: .create)
    for (name, bytes) in files {
        let data = Data(bytes)
        try archive.addEntry(
            with: name, type: .file, uncompressedSize: Int64(data.count),
            modificationDate: Date(timeIntervalSince1970: 1_700_000_000),
            compressionMethod: compress ? .deflate : .none
        ) { position, size in
            data.subdata(in: Int(position)..<(Int(position) + size))
        }
    }
    return [UInt8](try #require(archive.data))
}

private func json(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite struct DFUPackageTests {
    let app0: [UInt8]
    let net1: [UInt8]

    init() throws {
        app0 = try MCUbootImage.build(
            application: [UInt8](repeating: 0xA5, count: 4000),
            version: MCUbootVersion(major: 1, minor: 2, revision: 3, build: 4))
        net1 = try MCUbootImage.build(
            application: [UInt8](repeating: 0x5A, count: 1500), version: MCUbootVersion(major: 0, minor: 9))
    }

    @Test func readsNrfConnectSDKManifestInFileOrder() throws {
        let manifest = """
            {"format-version": 0, "time": 1700000000, "name": "demo", "files": [
              {"type": "application", "board": "nrf5340dk", "soc": "nRF5340", "load_address": 65536,
               "image_index": "0", "slot_index_primary": "1", "slot_index_secondary": "2",
               "version_MCUBOOT": "1.2.3+4", "size": \(app0.count), "file": "app.signed.bin"},
              {"type": "application", "image_index": "1", "version": "0.9.0", "file": "net.signed.bin"}
            ]}
            """
        let zip = try makeZip(
            [("manifest.json", json(manifest)), ("app.signed.bin", app0), ("net.signed.bin", net1)], compress: true)
        let package = try DFUPackage(zipBytes: zip)
        #expect(package.style == .mcuManager)
        #expect(package.images.map(\.name) == ["app.signed.bin", "net.signed.bin"])
        #expect(package.images.map(\.imageIndex) == [0, 1])
        #expect(package.images[0].bytes == app0)
        #expect(package.images[0].role == .application)
        #expect(package.images[0].loadAddress == 0x10000)
        #expect(package.images[0].slot == 1)
        #expect(package.images[0].version == "1.2.3+4")
        #expect(package.images[0].mcubootImage?.hashCheck == .valid)
        #expect(package.images[1].mcubootImage?.version.description == "0.9.0+0")
        #expect(package.images.allSatisfy { $0.initPacket == nil })
    }

    @Test func toleratesHexLoadAddressAndIntegerImageNumbers() throws {
        let manifest = #"{"files": [{"load_address": 0xC000, "image": 1, "file": "a.bin"}]}"#
        let package = try DFUPackage(zipBytes: try makeZip([("manifest.json", json(manifest)), ("a.bin", net1)]))
        #expect(package.images.first?.imageIndex == 1)
        #expect(package.images.first?.loadAddress == 0xC000)
    }

    @Test func readsNordicDFUManifestWithInitPackets() throws {
        let manifest = """
            {"manifest": {
              "application": {"bin_file": "application.bin", "dat_file": "application.dat"},
              "softdevice_bootloader": {"bin_file": "sd_bl.bin", "dat_file": "sd_bl.dat",
                                        "info_read_only_metadata": {"bl_size": 100, "sd_size": 200}}
            }}
            """
        let zip = try makeZip([
            ("manifest.json", json(manifest)), ("application.bin", [1, 2, 3, 4]), ("application.dat", [9, 9]),
            ("sd_bl.bin", [5, 6]), ("sd_bl.dat", [8])
        ])
        let package = try DFUPackage(zipBytes: zip)
        #expect(package.style == .nordicDFU)
        #expect(package.images.map(\.role) == [.softDeviceAndBootloader, .application])
        #expect(package.images[1].bytes == [1, 2, 3, 4])
        #expect(package.images[1].initPacket == [9, 9])
        #expect(package.images[0].initPacket == [8])
    }

    @Test func rejectsZipWithoutManifest() throws {
        let zip = try makeZip([("application.bin", [1, 2, 3])])
        #expect(throws: FirmwareImageError.dfuMissingManifest) { try DFUPackage(zipBytes: zip) }
    }

    @Test func rejectsManifestNamingAnAbsentFile() throws {
        let manifest = #"{"manifest": {"application": {"bin_file": "app.bin", "dat_file": "app.dat"}}}"#
        let zip = try makeZip([("manifest.json", json(manifest)), ("app.bin", [1])])
        #expect(throws: FirmwareImageError.dfuMissingFile("app.dat")) { try DFUPackage(zipBytes: zip) }
    }

    @Test func rejectsManifestThatIsNotJSON() throws {
        let zip = try makeZip([("manifest.json", json("{\"files\": [ {\"file\": "))])
        #expect(throws: FirmwareImageError.dfuBadManifest("not valid JSON")) { try DFUPackage(zipBytes: zip) }
    }

    @Test func rejectsManifestOfNeitherStyle() throws {
        let zip = try makeZip([("manifest.json", json(#"{"format-version": 1}"#))])
        #expect(
            throws: FirmwareImageError.dfuBadManifest("it has neither 'files' (McuMgr) nor 'manifest' (Nordic DFU)")
        ) {
            try DFUPackage(zipBytes: zip)
        }
    }

    @Test func rejectsEntryWithoutFileName() throws {
        let zip = try makeZip([("manifest.json", json(#"{"files": [{"image_index": "0"}]}"#))])
        #expect(throws: FirmwareImageError.dfuBadManifest("files[0] has no 'file'")) { try DFUPackage(zipBytes: zip) }
    }

    @Test func rejectsEmptyFileList() throws {
        let zip = try makeZip([("manifest.json", json(#"{"files": []}"#))])
        #expect(throws: FirmwareImageError.dfuNoImages) { try DFUPackage(zipBytes: zip) }
    }

    @Test func rejectsBytesThatAreNotAZip() {
        #expect(throws: FirmwareImageError.dfuNotAZip) { try DFUPackage(zipBytes: Array("not a zip at all".utf8)) }
        #expect(throws: FirmwareImageError.dfuNotAZip) { try DFUPackage(zipBytes: []) }
    }

    @Test func rejectsEntryWhoseDataWasCorrupted() throws {
        var zip = try makeZip([("manifest.json", json(#"{"files": [{"file": "a.bin"}]}"#)), ("a.bin", app0)])
        // Flip a byte inside a.bin's stored data: the CRC check on extraction must catch it.
        let marker = Array(app0[0x200..<0x210])
        let at = try #require((0..<(zip.count - marker.count)).first { Array(zip[$0..<($0 + marker.count)]) == marker })
        zip[at + 3] ^= 0xFF
        #expect(throws: FirmwareImageError.dfuUnreadableEntry("a.bin")) { try DFUPackage(zipBytes: zip) }
    }
}
