import ArgumentParser
import Diagnostics
import FirmwareImage
import Foundation

/// `bitflash inspect FILE [--board B] [--json]`: what a firmware file holds, per board section.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show what a firmware file holds: board sections, address runs and the MakeCode program region.",
        discussion: """
            For each board section: the format, the board ID and chip, the address runs, the \
            application region, and the MakeCode program the device would find (runtime hash, \
            program hash, region, 64-byte blocks and flash pages). For an MCUboot image also its \
            version, header and image sizes, TLVs, image hash and whether the hash is valid; for a \
            UF2 file its family IDs; for a DFU zip its images. Exit code 65: the file is not \
            valid (the message names the line and column); 66: the file cannot be read.
            """)

    @Argument(help: "The firmware file (Intel HEX, Universal Hex, UF2, MCUboot image or DFU zip).")
    var file: String

    @Option(
        help: ArgumentHelp(
            "Show only the section this board uses.",
            valueName: "microbit-v1|microbit-v2|calliope-mini-1|calliope-mini-2|calliope-mini-3"),
        transform: InspectCommand.board(named:))
    var board: Board?

    @Flag(help: "Print JSON (stable: sorted keys) instead of a table.")
    var json = false

    static func board(named name: String) throws -> Board {
        guard let b = Board(userName: name) else {
            throw ValidationError(
                "unknown board '\(name)': expected one of \(Board.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return b
    }

    func run() throws {
        try Self.inspect(file: file, board: board, json: json)
    }

    /// What `run` does, for the parsed options.
    static func inspect(file: String, board: Board?, json: Bool) throws {
        let (firmware, size) = try FirmwareFileLoading.load(file)
        var selected = Array(firmware.sections.indices)
        if let board {
            do {
                let section = try firmware.section(for: board)
                selected = firmware.sections.indices.filter { firmware.sections[$0] == section }.prefix(1).map { $0 }
            } catch let error as FirmwareImageError {
                FirmwareFileLoading.report(error, file: file)
                throw SysExit.dataError
            }
        }
        let report = InspectReport(firmware, size: size, sections: selected)
        if json {
            print(try JSONText.document(report))
        } else {
            print(report.text, terminator: "")
        }
    }
}

/// What `inspect` shows; encoded as JSON or rendered as text.
struct InspectReport: Codable, Equatable {
    struct Run: Codable, Equatable {
        var start: String
        var end: String
        var size: Int
    }

    struct Program: Codable, Equatable {
        var magicAddress: String
        var runtimeHash: String
        var programHash: String
        var region: Run
        var blocks: Int
        var pages: Int
        var pageSize: Int
    }

    struct Magic: Codable, Equatable {
        var address: String
        var pageAligned: Bool
        var runtimeHash: String
        /// True for the one the device would use.
        var used: Bool
    }

    struct Section: Codable, Equatable {
        var index: Int
        var boardID: String?
        var name: String
        var chip: String?
        var family: String?
        var boards: [String]
        var dataBytes: Int
        var runs: [Run]
        var applicationRegion: Run?
        var scratchPage: String?
        var makeCode: Program?
        var makeCodeAbsent: String?
        var magicOccurrences: [Magic]
        var startAddress: String?
        var warnings: [String]
    }

    var file: String
    var format: String
    var formatName: String
    var universalHexLayout: String?
    var size: Int
    var warnings: [String]
    var sections: [Section]
    /// For an MCUboot image (or a DFU zip whose application is one).
    var mcuboot: MCUboot?
    /// For a UF2 file.
    var uf2Families: [String]?
    /// For a DFU zip.
    var dfuStyle: String?
    var dfuImages: [DFUImage]?

    init(_ firmware: Firmware, size: Int, sections selected: [Int]) {
        file = firmware.fileName
        format = firmware.format.rawValue
        formatName = firmware.format.displayName
        universalHexLayout = firmware.universalHexLayout?.rawValue
        self.size = size
        warnings = firmware.warnings.map(\.description)
        mcuboot = firmware.mcuboot.map(MCUboot.init)
        uf2Families = firmware.format == .uf2 ? firmware.uf2FamilyIDs.map(Self.uf2FamilyName) : nil
        dfuStyle = firmware.dfuPackage.map { $0.style == .mcuManager ? "McuMgr" : "Nordic DFU" }
        dfuImages = firmware.dfuPackage.map { $0.images.map(DFUImage.init) }
        sections = selected.map { i in
            let s = firmware.sections[i]
            let boards = Board.allCases.filter { (try? firmware.section(for: $0)) == s }.map(\.displayName)
            var program: MakeCodeProgram?
            var absent: String?
            // One search for the magic serves both the program and the list of occurrences.
            let hits = MakeCodeProgram.magicAddresses(in: s.image)
            if let family = s.family {
                do {
                    program = try MakeCodeProgram.locate(in: s.image, family: family, magicAt: hits)
                } catch let FirmwareImageError.noMakeCodeProgram(reason, _) {
                    absent = reason.description
                } catch {
                    absent = "\(error)"
                }
            } else {
                absent = "the chip is unknown, so the device's search cannot be reproduced"
            }
            let magics = hits.map { a in
                Magic(
                    address: Hex.address(a), pageAligned: s.family.map { a % $0.pageSize == 0 } ?? false,
                    runtimeHash: s.image.read((a + 16)..<(a + 24)).hexString, used: a == program?.magicAddress)
            }
            let layout = s.family?.layout
            return Section(
                index: i + 1, boardID: s.boardID.map(UniversalHex.boardIDString), name: s.name,
                chip: s.family?.chipName, family: s.family?.rawValue, boards: boards,
                dataBytes: s.image.byteCount, runs: s.image.runs.map(Self.run),
                applicationRegion: layout.map { Self.run($0.application) },
                scratchPage: layout.map { Hex.address($0.scratchPage) },
                makeCode: program.map { p in
                    Program(
                        magicAddress: Hex.address(p.magicAddress), runtimeHash: p.runtimeHash.hexString,
                        programHash: p.programHash.hexString, region: Self.run(p.region), blocks: p.blockCount,
                        pages: p.pageCount(pageSize: s.family!.pageSize), pageSize: Int(s.family!.pageSize))
                },
                makeCodeAbsent: absent, magicOccurrences: magics,
                startAddress: s.startAddress?.description, warnings: s.warnings.map(\.description))
        }
    }

    static func run(_ r: Range<UInt32>) -> Run {
        Run(start: Hex.address(r.lowerBound), end: Hex.address(r.upperBound), size: r.count)
    }

    /// The table.
    var text: String {
        var out = "\(file): \(formatName)"
        if let layout = universalHexLayout { out += " (\(layout) layout)" }
        out += ", \(size) bytes\n"
        out += containerText
        for w in warnings { out += "  warning: \(w)\n" }
        for s in sections {
            out += "\nSection \(s.index): \(s.name)\n"
            func row(_ label: String, _ value: String) {
                out += "  " + label.inspectLabel + value + "\n"
            }
            row("used by:", s.boards.isEmpty ? "no supported board" : s.boards.joined(separator: ", "))
            row("data:", "\(s.dataBytes) bytes in \(s.runs.count) run\(s.runs.count == 1 ? "" : "s")")
            for (k, r) in s.runs.enumerated() {
                row(k == 0 ? "runs:" : "", "\(r.start)-\(r.end)  \(String(r.size).leftPadded(9)) B")
            }
            if let app = s.applicationRegion, let scratch = s.scratchPage {
                row(
                    "application:",
                    "\(app.start)-\(app.end) (the device looks for the program below the scratch page \(scratch))")
            } else {
                row("application:", "unknown (chip not recognised)")
            }
            if let p = s.makeCode {
                row("MakeCode magic:", p.magicAddress)
                row("runtime hash:", p.runtimeHash)
                row("program hash:", p.programHash)
                row(
                    "program region:",
                    "\(p.region.start)-\(p.region.end) (\(p.region.size) bytes, \(p.blocks) blocks of 64 bytes, \(p.pages) page\(p.pages == 1 ? "" : "s") of \(p.pageSize) bytes)"
                )
            } else {
                row("MakeCode program:", "none: \(s.makeCodeAbsent ?? "not found") (partial flashing impossible)")
            }
            let others = s.magicOccurrences.filter { !$0.used }
            for (k, m) in others.enumerated() {
                row(
                    k == 0 ? "other magic:" : "",
                    "\(m.address) (\(m.pageAligned ? "page-aligned" : "not page-aligned"), hash \(m.runtimeHash)): not used by the device"
                )
            }
            if let start = s.startAddress { row("start address:", "\(start) (not used)") }
            if s.warnings.isEmpty {
                row("warnings:", "none")
            } else {
                for (k, w) in s.warnings.enumerated() { row(k == 0 ? "warnings:" : "", w) }
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    /// A row label of the table, cut or padded with spaces to 18 characters (in Swift: no
    /// Foundation bridging for each row).
    var inspectLabel: String {
        count >= 18 ? String(prefix(18)) : self + String(repeating: " ", count: 18 - count)
    }
}
