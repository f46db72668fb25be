import ArgumentParser
import Diagnostics
import FirmwareImage
import Foundation
import Laboratory

/// The exit codes the file-reading commands throw after printing their own message.
enum SysExit {
    /// The input data was incorrect in some way (a bad firmware file).
    static let dataError = ExitCode(ExitStatus.badFirmware.rawValue)
    /// An input file did not exist or was not readable.
    static let noInput = ExitCode(ExitStatus.cannotRead.rawValue)
}

/// Reading a firmware file for a command: errors go to stderr with the file name (and line and
/// column for text formats) and become exit code 65 (bad data) or 66 (unreadable file).
enum FirmwareFileLoading {
    static func readBytes(_ path: String) throws -> [UInt8] {
        do {
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            printError("\(path): cannot read the file: \(reason)")
            throw SysExit.noInput
        }
    }

    static func load(_ path: String) throws -> (firmware: Firmware, size: Int) {
        let bytes = try readBytes(path)
        do {
            return (try Firmware.parse(bytes, fileName: (path as NSString).lastPathComponent), bytes.count)
        } catch let error as FirmwareImageError {
            report(error, file: path)
            throw SysExit.dataError
        }
    }

    /// Reads a firmware file for `flash`: errors become `CLIError`s for the one error funnel.
    static func loadForFlash(_ path: String) throws -> Firmware {
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            throw CLIError(.cannotRead, "\(path): cannot read the file: \(reason)")
        }
        do {
            return try Firmware.parse(bytes, fileName: (path as NSString).lastPathComponent)
        } catch let error as FirmwareImageError {
            if let p = error.position { throw CLIError(.badFirmware, "\(path):\(p.line):\(p.column): \(error.message)") }
            throw CLIError(.badFirmware, "\(path): \(error.message)")
        } catch {
            throw CLIError(.badFirmware, "\(path): \(error)")
        }
    }

    /// `bitflash: prog.hex:12:9: bad checksum: expected 0x3C, found 0x3D`.
    static func report(_ error: FirmwareImageError, file: String) {
        if let p = error.position {
            printError("\(file):\(p.line):\(p.column): \(error.message)")
        } else if error.message.hasPrefix((file as NSString).lastPathComponent) {
            printError(error.message)  // the message names the file already
        } else {
            printError("\(file): \(error.message)")
        }
    }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data("bitflash: \(message)\n".utf8))
    }
}

extension SimProfile {
    /// The image of a firmware file for this profile's board (for `sim reset --from`).
    func image(fromFile path: String) throws -> MemoryImage {
        let firmware = try FirmwareFileLoading.loadForFlash(path)
        do {
            return try firmware.image(for: board)
        } catch let error as FirmwareImageError {
            throw CLIError(.badFirmware, "\(path): \(error.message)")
        }
    }
}
