import FirmwareImage
import Flasher
import Flashing
import Foundation

/// What a firmware file given to the page is: its format and size, the boards it is for, its
/// MakeCode runtime and program. What the page shows before anything is flashed.
public struct FileSummary: Codable, Sendable, Equatable {
    /// The name the browser gave, for messages only (the file is read in memory, never saved).
    public var name: String
    public var format: String
    public var size: Int
    /// The kinds of board the file is for (`micro:bit V2`, `Calliope mini 3` …).
    public var boards: [String]
    /// The MakeCode runtime's hash, as 16 hexadecimal digits (nil: no MakeCode program).
    public var runtime: String?
    /// The MakeCode program region's size in bytes (nil: no MakeCode program).
    public var programBytes: Int?
    /// What the reader noticed and let through (`ignored 2 lines after the end-of-file record`).
    public var warnings: [String]
}

/// Reading a file given to the page, in memory, with the command line's words for a file that
/// cannot be flashed.
public enum FileCheck {
    /// The largest file any board can take: the largest of every format's limit
    /// (`Firmware.Format.maximumFileSize`). Larger uploads are refused before they are read.
    public static let largestUpload = Firmware.Format.allCases.map(\.maximumFileSize).max() ?? 0

    /// The name a browser gave a file, fit for a message: its last path component, printable
    /// characters only, at most 120 of them.
    public static func displayName(_ given: String?) -> String {
        let last = (given ?? "").split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let printable = String(last.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
        return printable.isEmpty ? "firmware" : String(printable.prefix(120))
    }

    /// The firmware in `bytes` and what it is, planned by `flasher`'s policy for each kind of
    /// board; or the refusal, worded as `bitflash flash` words it for the same file (the
    /// reader's error with its line and column, or the policy's `FlashRefusal`).
    /// - Parameter kinds: the kinds of board the file must suit (the simulated class's kind);
    ///   empty: any kind.
    public static func read(_ bytes: [UInt8], name: String, flasher: Flasher, kinds: [Board]) -> Result<
        (Firmware, FileSummary), FileRefusal
    > {
        let firmware: Firmware
        do {
            firmware = try Firmware.parse(bytes, fileName: name)
        } catch let error as FirmwareImageError {
            return .failure(FileRefusal(message: message(error, file: name)))
        } catch {
            return .failure(FileRefusal(message: "\(name): \(error)"))
        }
        var fits: [Board] = []
        var refusal: String?
        var program: MakeCodeProgram?
        for kind in kinds.isEmpty ? Board.allCases : kinds {
            do {
                let plan = try flasher.plan(firmware, for: kind, described: kind.displayName)
                fits.append(kind)
                program = program ?? plan.program
            } catch {
                refusal = refusal ?? "\(error)"
            }
        }
        if fits.isEmpty || fits.count < kinds.count {
            return .failure(FileRefusal(message: refusal ?? "\(name): not for these boards"))
        }
        var seen = Set<String>()
        let summary = FileSummary(
            name: name, format: firmware.format.rawValue, size: bytes.count, boards: fits.map(\.displayName),
            runtime: program.map { hex($0.runtimeHash.prefix(8)) },
            programBytes: program.map { Int($0.region.count) },
            warnings: firmware.allWarnings.map(\.description).filter { seen.insert($0).inserted })
        return .success((firmware, summary))
    }

    /// `prog.hex:12:9: bad checksum: …`, or `prog.hex: …`: the command line's words
    /// (`bitflash: ` comes before them there).
    static func message(_ error: FirmwareImageError, file: String) -> String {
        if let p = error.position { return "\(file):\(p.line):\(p.column): \(error.message)" }
        if error.message.hasPrefix(file) { return error.message }
        return "\(file): \(error.message)"
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02X", $0) }.joined()
    }
}

/// Why the page refuses a file or a request, in words a teacher can act on.
public struct FileRefusal: Error, Sendable, Equatable {
    public var message: String
}
