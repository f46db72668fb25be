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

    /// Refuses a file that cannot be for `board` (`Firmware.problems(for:)`, and those of the
    /// MCUboot image `--dfu-image` gives), unless `force` is set and every problem may be
    /// overridden; then each is printed as a warning.
    /// - Throws: `CLIError(.badFirmware)` naming what was found and what the board needs.
    static func checkFits(
        _ firmware: Firmware, file: String, board: Board, force: Bool,
        dfuImage: (image: MCUbootImage, address: UInt32?, path: String)? = nil
    ) throws {
        var problems = firmware.problems(for: board).map { (file, $0) }
        if let dfuImage {
            problems += dfuImage.image.problems(for: board, address: dfuImage.address).map { (dfuImage.path, $0) }
        }
        guard !problems.isEmpty else { return }
        let fixed = problems.filter { !$0.1.overridable }
        if force, fixed.isEmpty {
            for (path, problem) in problems {
                StdErr.write("bitflash: warning: \(path): flashing it anyway (--force): \(problem.message)\n")
            }
            return
        }
        let files = Set(problems.map(\.0))
        let subject =
            files.count == 1 ? "\(files.first!) is not" : "\(files.sorted().joined(separator: " and ")) are not"
        let reasons = problems.map { files.count == 1 ? $0.1.message : "\($0.0): \($0.1.message)" }.joined(
            separator: "; ")
        let advice =
            fixed.isEmpty
            ? " (--force flashes it anyway)"
            : (fixed.count < problems.count
                ? " (--force does not override \(Array(Set(fixed.map(\.1.kind.checkName))).sorted().joined(separator: " or ")))"
                : "")
        throw CLIError(.badFirmware, "\(subject) for a \(board.displayName): \(reasons)\(advice)")
    }

    /// Refuses an MCUboot image (the file, or `--dfu-image`) whose hash TLV does not match its
    /// bytes: it was damaged after it was built, the board's MCUboot would refuse to boot it, and
    /// no flag can make it whole. Checked before anything is sent; `--force` does not override it.
    static func requireIntactImages(
        _ firmware: Firmware, file: String, dfuImage: (image: MCUbootImage, address: UInt32?, path: String)? = nil
    ) throws {
        for (path, image) in [(file, firmware.mcuboot), (dfuImage?.path, dfuImage?.image)] {
            guard let path, let image, case let .mismatch(stored, computed) = image.hashCheck else { continue }
            throw CLIError(
                .badFirmware,
                "\(path): the MCUboot image is damaged: its hash TLV says \(Hex.bytes(Array(stored.prefix(8)), uppercase: false))…, "
                    + "its bytes hash to \(Hex.bytes(Array(computed.prefix(8)), uppercase: false))…; the board would not boot it. "
                    + "Build or download it again (nothing was sent)")
        }
    }

    /// Refuses a plan no path can carry out: no MakeCode program for partial flashing and no
    /// application for a full update (McuMgr or Nordic DFU), as `plan` finds no estimate. It is
    /// the file's problem, so `plan` and `flash` both exit 65, before any board is touched.
    static func requireSomethingToWrite(_ plan: FlashPlan, file: String, board: Board) throws {
        guard BoardlessPlan.make(plan, board: board).byProfile.first?.estimates.isEmpty ?? true else { return }
        throw CLIError(
            .badFirmware,
            "\(file): neither path can write this file to a \(board.displayName): "
                + "it holds no MakeCode program and no application image could be made from it")
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
