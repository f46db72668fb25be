import ArgumentParser
import Diagnostics
import FirmwareImage
import Flashing
import Foundation
import Laboratory

/// The exit codes the file-reading commands throw after printing their own message.
enum SysExit {
    /// The input data was incorrect in some way (a bad firmware file).
    static let dataError = ExitCode(ExitStatus.badFirmware.rawValue)
    /// An input file did not exist or was not readable.
    static let noInput = ExitCode(ExitStatus.cannotRead.rawValue)
}

/// Reading a firmware file for a command: the format from its first bytes, its size against the
/// format's limit before the rest is read, Intel HEX as it streams in (`Firmware.parse(source:)`).
/// Errors name the file (and line and column for text formats) and become exit code 65 (bad
/// data) or 66 (not a file that can be read).
enum FirmwareFileLoading {
    /// Reads and parses `path`; the size is the file's (or, for a stream, the bytes read).
    /// - Throws: `CLIError` with `.cannotRead` or `.badFirmware`.
    static func read(_ path: String) throws -> (firmware: Firmware, size: Int) {
        let file = try InputFile.open(path)
        var source = CountingSource(file: file)
        do {
            let firmware = try Firmware.parse(
                source: &source, size: file.size, fileName: (path as NSString).lastPathComponent)
            return (firmware, file.size ?? source.count)
        } catch let error as FirmwareImageError {
            throw CLIError(.badFirmware, message(error, file: path, kind: file.kind))
        }
    }

    /// Reads a firmware file for `flash`, `plan` and `convert`; its warnings go to stderr, a line each.
    static func loadForFlash(_ path: String) throws -> Firmware {
        let firmware = try read(path).firmware
        warn(firmware, file: path)
        return firmware
    }

    /// Reads a firmware file for `inspect`, which shows the warnings itself: errors are printed
    /// here and become the exit code.
    static func load(_ path: String) throws -> (firmware: Firmware, size: Int) {
        do {
            return try read(path)
        } catch let error as CLIError {
            printError(error.message)
            throw ExitCode(error.exitStatus.rawValue)
        }
    }

    /// The bytes of a file that is not parsed here (`bench parse`, `sim replay`), at most as many
    /// as the largest firmware file.
    static func readBytes(_ path: String) throws -> [UInt8] {
        do {
            var file = try InputFile.open(path)
            return try file.readAll(limit: Firmware.Format.intelHex.maximumFileSize)
        } catch let error as CLIError {
            printError(error.message)
            throw SysExit.noInput
        }
    }

    /// `bitflash: warning: prog.hex: ignored 2 lines after the end-of-file record …`.
    static func warn(_ firmware: Firmware, file: String) {
        var seen = Set<String>()
        for warning in firmware.allWarnings where seen.insert(warning.description).inserted {
            StdErr.write("bitflash: warning: \(file): \(warning)\n")
        }
    }

    /// `prog.hex:12:9: bad checksum: …`, or `prog.hex: …`; for a FIFO or a device, what it is.
    static func message(_ error: FirmwareImageError, file: String, kind: InputFile.Kind = .regular) -> String {
        var text: String
        if let p = error.position {
            text = "\(file):\(p.line):\(p.column): \(error.message)"
        } else if error.message.hasPrefix((file as NSString).lastPathComponent) {
            text = file + error.message.dropFirst((file as NSString).lastPathComponent.count)
        } else {
            text = "\(file): \(error.message)"
        }
        if kind != .regular {
            switch error {
            case .unrecognizedFormat, .emptyFile, .fileTooLarge, .missingColon, .uf2Empty, .uf2SizeNotBlockMultiple,
                .dfuNotAZip:
                text += " (\(file) is \(kind.name), not a regular file)"
            default:
                break
            }
        }
        return text
    }

    /// `bitflash: prog.hex:12:9: bad checksum: expected 0x3C, found 0x3D`.
    static func report(_ error: FirmwareImageError, file: String) {
        printError(message(error, file: file))
    }

    static func printError(_ message: String) {
        StdErr.write("bitflash: \(message)\n")
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

/// A file read through, counting its bytes (the size of a stream, once read).
struct CountingSource: FirmwareByteSource {
    var file: InputFile
    private(set) var count = 0

    init(file: InputFile) { self.file = file }

    mutating func read(maximum: Int) throws -> [UInt8] {
        let bytes = try file.read(maximum: maximum)
        count += bytes.count
        return bytes
    }

    mutating func rewind() throws {
        try file.rewind()
        count = 0
    }
}
