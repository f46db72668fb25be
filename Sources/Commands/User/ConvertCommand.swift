import ArgumentParser
import Diagnostics
import FirmwareImage
import Flashing
import Foundation
import NordicDFU
import NordicDFUFrames

/// `bitflash convert FILE --board B --to hex|bin|uf2|mcuboot -o OUT`.
struct ConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract:
            "Write one board's image as Intel HEX, a raw binary, UF2, an unsigned MCUboot image or a Nordic DFU package.",
        discussion: """
            hex: a plain Intel HEX of the board's whole image. bin: the bytes of --range START-END \
            (default: the application region), gaps filled with 0xFF. uf2: the image with the board's \
            UF2 family ID (nRF52833 0x621E937A; nRF51 boards have none). mcuboot: an unsigned MCUboot \
            image (header of one flash page and a SHA-256 TLV) of the application region. \
            nordic-dfu-zip: the .zip (manifest.json, application.bin and its init packet \
            application.dat) that nRF Connect and the mobile apps take for a stock board's Nordic \
            bootloader: Secure DFU on micro:bit V2 and Calliope mini 3, legacy DFU on the nRF51 boards.
            """)

    enum Target: String, ExpressibleByArgument, CaseIterable {
        case hex, bin, uf2, mcuboot
        case nordicDFUZip = "nordic-dfu-zip"
    }

    @Argument(help: "The firmware file.")
    var file: String

    @Option(help: ArgumentHelp("The board whose image to write.", valueName: "BOARD"))
    var board: String

    @Option(help: "The output format.")
    var to: Target

    @Option(name: .shortAndLong, help: ArgumentHelp("The output file.", valueName: "OUT"))
    var output: String

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "For bin: the address range, e.g. 0x1C000-0x77000, inside the board's flash or UICR.",
            valueName: "START-END"))
    var range: String?

    @Flag(
        help:
            "Convert a file whose UF2 family ID or MCUboot header says it is for another board (the checks `flash --force` skips)."
    )
    var force = false

    func run() async throws {
        try await runCommand {
            guard let board = Board(userName: self.board) else {
                throw CLIError(
                    .usage,
                    "unknown board '\(self.board)': expected one of \(Board.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            let firmware = try FirmwareFileLoading.loadForFlash(file)
            var fit = PlanSettings()
            fit.force = force
            fit.fileLabel = file
            try FlashPolicy.checkFits(firmware, board: board, settings: fit) {
                StdErr.write("bitflash: warning: \($0)\n")
            }
            let image: MemoryImage
            do { image = try firmware.image(for: board) } catch let error as FirmwareImageError {
                throw CLIError(.badFirmware, "\(file): \(error.message)")
            }
            let layout = board.family.layout
            let bytes: [UInt8]
            switch to {
            case .hex:
                bytes = IntelHexWriter.write(image)
            case .bin:
                let r = try range.map { try Self.parseRange($0, board: board) } ?? layout.application
                guard image.hasData(in: r) else {
                    let named = range == nil ? " (the application region; give another with --range)" : ""
                    throw CLIError(
                        .badFirmware,
                        "\(file): the \(board.displayName) image has no data in \(Self.hex(r.lowerBound))-\(Self.hex(r.upperBound))\(named): "
                            + "a binary of it would be \(Figures.grouped(r.count)) bytes of 0xFF, so none is written")
                }
                bytes = image.read(r)
            case .uf2:
                guard let family = board.family.uf2FamilyID else {
                    throw CLIError(
                        .usage,
                        "UF2 has no family ID for \(board.family.chipName) boards (\(board.displayName)): use --to hex")
                }
                bytes = UF2File.encode(image.slice(layout.flash), familyID: family)
            case .mcuboot:
                guard let app = try FlashPlan.applicationImage(of: image, family: board.family) else {
                    throw CLIError(.badFirmware, "\(file): no data in the application region of \(board.displayName)")
                }
                bytes = app.bytes
            case .nordicDFUZip:
                bytes = try Self.nordicPackage(of: image, board: board, file: file)
            }
            try OutputFile.write(bytes, to: output, what: "the \(to.rawValue) file", inputs: [file])
            // Into standard output, the file is the output: the line goes to standard error.
            (OutputFile.isStandardOutput(output) ? StdErr.write : StdOut.write)(
                "wrote \(output): \(to.rawValue), \(Figures.grouped(bytes.count)) bytes for \(board.displayName)\n")
            return .ok
        }
    }

    /// The Nordic DFU package of `image`: the application cut as the reference clients cut it,
    /// with the init packet of the board's bootloader.
    static func nordicPackage(of image: MemoryImage, board: Board, file: String) throws -> [UInt8] {
        let app: DFUApplication
        do { app = try DFUApplication.cut(from: image, family: board.family) } catch {
            throw CLIError(.badFirmware, "\(file): \(error)")
        }
        let legacy = board.family == .nrf51
        let packet = legacy ? app.legacyInitPacket.bytes : app.secureInitPacket.bytes
        return try DFUPackage.nordicZip(application: app.bytes, initPacket: packet, legacy: legacy)
    }

    /// `START-END` (hex with 0x, or decimal), which must lie inside the board's flash or its UICR page:
    /// a binary never holds more than the board can.
    static func parseRange(_ text: String, board: Board) throws -> Range<UInt32> {
        // Every part counts: `-5-6` is not `5-6`, and `5-` has no end.
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        func number(_ s: String) -> UInt64? {
            let hex = s.lowercased().hasPrefix("0x")
            let digits = hex ? s.dropFirst(2) : Substring(s)
            guard !digits.isEmpty, digits.allSatisfy({ hex ? $0.isHexDigit : ("0"..."9").contains($0) }) else {
                return nil
            }
            return hex ? UInt64(digits, radix: 16) : UInt64(digits)
        }
        guard parts.count == 2, let a = number(parts[0]), let b = number(parts[1]), a < b else {
            throw CLIError(.usage, "--range \(text): expected START-END with START below END, e.g. 0x1C000-0x77000")
        }
        let layout = board.family.layout
        for area in [layout.flash, layout.uicr] where a >= UInt64(area.lowerBound) && b <= UInt64(area.upperBound) {
            return UInt32(a)..<UInt32(b)
        }
        throw CLIError(
            .usage,
            "--range \(text): reaches outside the \(board.displayName)'s flash (\(hex(0))-\(hex(layout.flashSize)), "
                + "\(layout.flashSize / 1024) KiB) and its UICR (\(hex(layout.uicr.lowerBound))-\(hex(layout.uicr.upperBound))): give a range inside one of them"
        )
    }

    static func hex(_ v: UInt32) -> String { Hex.number(v, digits: 5) }
}
