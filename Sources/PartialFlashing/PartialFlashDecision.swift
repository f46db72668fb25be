import Diagnostics
import FirmwareImage
import PartialFlashingFrames

/// Why partial flashing cannot be used and the board needs a full flash.
///
/// Shown to users and written to JSON: `code` is stable, `description` is a sentence
/// with the values that led to the decision.
public enum FullFlashReason: Sendable, Equatable, CustomStringConvertible {
    /// The firmware file holds no MakeCode program (no magic in its image).
    case fileHasNoProgram
    /// The board reports no program region, or zero hashes (no MakeCode program on it).
    case boardHasNoProgram(RegionInfo)
    /// The board runs a different runtime (DAL/CODAL build) than the file was built for.
    case runtimeDiffers(board: [UInt8], file: [UInt8])
    /// The program starts at a different address on the board than in the file.
    case programMoved(board: UInt32, file: UInt32)
    /// The file's program does not fit the region the board declared.
    case regionDoesNotFit(program: Range<UInt32>, board: Range<UInt32>)
    /// The board speaks a partial-flashing version this client does not know.
    case unsupportedProtocol(version: UInt8)
    /// The program the board reports starts pages past the end of the runtime it runs: a program
    /// left behind by a larger build, above a smaller application a full update wrote, whose
    /// hashes say nothing about the runtime now in flash.
    case programLeftBehind(runtimeEnd: UInt32, programStart: UInt32)

    /// A stable identifier for JSON and scripts.
    public var code: String {
        switch self {
        case .fileHasNoProgram: return "file-has-no-program"
        case .boardHasNoProgram: return "board-has-no-program"
        case .runtimeDiffers: return "runtime-differs"
        case .programMoved: return "program-moved"
        case .regionDoesNotFit: return "region-does-not-fit"
        case .unsupportedProtocol: return "unsupported-protocol"
        case .programLeftBehind: return "program-left-behind"
        }
    }

    public var description: String {
        switch self {
        case .fileHasNoProgram:
            return "the file holds no MakeCode program, so only a full flash can write it"
        case let .boardHasNoProgram(r):
            return "the board reports no MakeCode program (region \(Hex.address(r.start))-\(Hex.address(r.end)), "
                + "hash \(r.hash.hexString)), so a full flash is needed"
        case let .runtimeDiffers(board, file):
            return "the board's runtime \(board.hexString) differs from the file's runtime \(file.hexString), "
                + "so a full flash is needed"
        case let .programMoved(board, file):
            return "the program starts at \(Hex.address(board)) on the board but at \(Hex.address(file)) in the file, "
                + "so a full flash is needed"
        case let .regionDoesNotFit(program, board):
            return
                "the file's program (\(Hex.address(program.lowerBound))-\(Hex.address(program.upperBound))) does not fit "
                + "the board's program region (\(Hex.address(board.lowerBound))-\(Hex.address(board.upperBound))), "
                + "so a full flash is needed"
        case let .unsupportedProtocol(version):
            return "the board speaks partial-flashing version \(version), this tool knows version 1, "
                + "so a full flash is needed"
        case let .programLeftBehind(runtimeEnd, programStart):
            return "the board's runtime ends at \(Hex.address(runtimeEnd)) but the program it reports starts at "
                + "\(Hex.address(programStart)), pages further on: that program was left behind by an earlier build "
                + "and its hashes do not describe the runtime in flash, so a full flash is needed"
        }
    }
}

/// What to do with a board, given what it reported and the file's program.
public enum PartialFlashDecision: Sendable, Equatable {
    /// The board already runs this program: write nothing, restart it into its application (`FF 01`).
    case upToDate
    /// Same runtime, same program start: write the program region.
    case partial
    /// Partial flashing cannot write this file to this board.
    case fullRequired(FullFlashReason)

    /// Decides from the board's memory map and the file's program (nil when the file has none).
    ///
    /// Checks, in order: a program in the file; a program on the board (non-empty region 2,
    /// non-zero hashes); the protocol version; a program that follows the board's runtime (not
    /// one left behind above a smaller one); equal runtime hashes; equal program starts;
    /// equal program hashes (up to date); the program's region inside the board's region,
    /// clipped to the scratch page of `family`.
    public init(board: BoardMemoryMap, program: MakeCodeProgram?, family: ChipFamily) {
        guard let program else { self = .fullRequired(.fileHasNoProgram); return }
        guard board.hasProgram else { self = .fullRequired(.boardHasNoProgram(board.program)); return }
        guard board.protocolVersion == 1 else {
            self = .fullRequired(.unsupportedProtocol(version: board.protocolVersion)); return
        }
        if let end = Self.programLeftBehind(board, family: family) {
            self = .fullRequired(.programLeftBehind(runtimeEnd: end, programStart: board.program.start)); return
        }
        guard board.runtime.hash == program.runtimeHash else {
            self = .fullRequired(.runtimeDiffers(board: board.runtime.hash, file: program.runtimeHash)); return
        }
        guard board.program.start == program.magicAddress else {
            self = .fullRequired(.programMoved(board: board.program.start, file: program.magicAddress)); return
        }
        if board.program.hash == program.programHash { self = .upToDate; return }
        let writable = Self.writableRange(of: board.program, family: family)
        guard program.region.lowerBound == program.magicAddress, !program.region.isEmpty,
            program.region.lowerBound >= writable.lowerBound, program.region.upperBound <= writable.upperBound
        else {
            self = .fullRequired(.regionDoesNotFit(program: program.region, board: writable)); return
        }
        self = .partial
    }

    /// The runtime's end when the program the board reports lies more than two pages past the page
    /// the runtime's scan starts at. DAL's and CODAL's `MicroBitMemoryMap::findHashes` scan page by
    /// page from `FLASH_PROGRAM_END` up to the scratch page and take the first magic they find,
    /// and MakeCode puts the program at the page after the runtime's end; a Nordic DFU erases only
    /// the pages of the new image (SDK 8 `dfu_single_bank.c`, V2 `nrf_dfu_req_handler.c`), so a
    /// program above a smaller new application survives and is found. Nil when the program
    /// follows the runtime.
    public static func programLeftBehind(_ board: BoardMemoryMap, family: ChipFamily) -> UInt32? {
        let page = family.pageSize
        let runtime = board.runtime
        guard runtime.end > runtime.start, runtime.start == family.layout.applicationStart else { return nil }
        let scanStart = (UInt64(runtime.end) + UInt64(page - 1)) & ~UInt64(page - 1)
        return UInt64(board.program.start) > scanStart + 2 * UInt64(page) ? runtime.end : nil
    }

    /// The part of a declared program region that may be written: from its start to the
    /// lower of its end and the scratch page (DAL declares 0x3BBFF, past the scratch page).
    public static func writableRange(of region: RegionInfo, family: ChipFamily) -> Range<UInt32> {
        let end = min(region.end, family.layout.scratchPage)
        return region.start..<max(region.start, end)
    }
}
