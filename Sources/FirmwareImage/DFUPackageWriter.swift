import Foundation
import ZIPFoundation

extension DFUPackage {
    /// A Nordic DFU package as nrfutil writes one and nRF Connect and the mobile apps read it:
    /// `manifest.json` naming `application.bin` and its init packet `application.dat`.
    ///
    /// - Parameters:
    ///   - application: the binary the bootloader writes at the start of the application region.
    ///   - initPacket: the init packet (the micro:bit's 56-byte `microbit_app` command for the
    ///     Secure DFU bootloader, the 14-byte packet for the legacy one).
    ///   - legacy: true for the legacy bootloader (the manifest then states `dfu_version` 0.5).
    /// - Returns: the bytes of the `.zip`, whose entries are deflated.
    public static func nordicZip(application: [UInt8], initPacket: [UInt8], legacy: Bool) throws -> [UInt8] {
        let manifest = """
            {
              "manifest": {
                "application": {
                  "bin_file": "application.bin",
                  "dat_file": "application.dat"
                }\(legacy ? ",\n    \"dfu_version\": 0.5" : "")
              }
            }

            """
        let archive: Archive
        do {
            archive = try Archive(data: Data(), accessMode: .create)
        } catch {
            throw FirmwareImageError.dfuBadManifest("cannot create the zip: \(error)")
        }
        let entries: [(String, [UInt8])] = [
            ("manifest.json", Array(manifest.utf8)),
            ("application.bin", application), ("application.dat", initPacket)
        ]
        for (name, bytes) in entries {
            let data = Data(bytes)
            do {
                try archive.addEntry(
                    with: name, type: .file, uncompressedSize: Int64(data.count),
                    modificationDate: Date(timeIntervalSince1970: 1_700_000_000),
                    compressionMethod: .deflate
                ) { position, size in
                    data.subdata(in: Int(position)..<(Int(position) + size))
                }
            } catch {
                throw FirmwareImageError.dfuBadManifest("cannot add \(name) to the zip: \(error)")
            }
        }
        guard let zip = archive.data else { throw FirmwareImageError.dfuBadManifest("the zip was not written") }
        return [UInt8](zip)
    }
}
