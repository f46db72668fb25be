import Diagnostics

/// Why a firmware file cannot be for a board: found in the file before anything is sent, each with
/// what was found and what the board needs.
///
/// Some problems are `overridable`: the file may still be meant for the board (a UF2 labelled with
/// another family ID, an MCUboot image built with another header size) and what bitflash would
/// write stays inside the board's application region or slot. The others never are: data the chip
/// has no memory for, a SoftDevice that reaches into the board's application region, an MCUboot
/// image larger than the slot or fixed to another address, package parts bitflash does not flash,
/// code whose vector table is another chip's (`VectorTable.swift`).
public struct BoardProblem: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// UF2 blocks name another chip family.
        case uf2Family = "uf2-family"
        /// Data at addresses the chip has no flash or UICR for.
        case outsideMemory = "outside-memory"
        /// The file's SoftDevice ends somewhere else than where the board's application starts.
        case softDevice = "softdevice"
        /// An MCUboot image that does not fit the board's primary slot, or runs elsewhere.
        case mcubootSlot = "mcuboot-slot"
        /// An MCUboot image whose header size puts its application somewhere else than the board's.
        case mcubootLayout = "mcuboot-layout"
        /// A DFU package with parts besides the application bitflash flashes.
        case packageParts = "package-parts"
        /// Code whose vector table is another chip's: a stack pointer outside the chip's RAM, a
        /// reset handler outside the code the board would start.
        case vectorTable = "vector-table"

        /// `the SoftDevice check`, for messages.
        public var checkName: String {
            switch self {
            case .uf2Family: return "the UF2 family check"
            case .outsideMemory: return "the memory check"
            case .softDevice: return "the SoftDevice check"
            case .mcubootSlot: return "the MCUboot slot check"
            case .mcubootLayout: return "the MCUboot layout check"
            case .packageParts: return "the DFU package check"
            case .vectorTable: return "the vector table check"
            }
        }
    }

    public var kind: Kind
    /// What was found and what the board needs, as a sentence.
    public var message: String
    public var overridable: Bool

    public init(_ kind: Kind, _ message: String, overridable: Bool) {
        self.kind = kind
        self.message = message
        self.overridable = overridable
    }

    public var description: String { message }
}

extension MemoryLayout {
    /// The UICR page, which hex files for these boards also fill (bootloader address, MicroPython's
    /// settings): 0x10001000, one flash page long.
    public var uicr: Range<UInt32> { 0x1000_1000..<(0x1000_1000 + pageSize) }

    /// The primary MCUboot slot of a board with MCUboot: from one page below the application start
    /// to the runtime's scratch page, so that an image with a one-page header
    /// (`imgtool --header-size <page> --pad-header`) puts its application at the application start.
    public var mcubootPrimarySlot: Range<UInt32> { (applicationStart - pageSize)..<scratchPage }
}

extension Firmware {
    /// Everything that says this file is not for `board`, in the order checked; empty when none.
    public func problems(for board: Board) -> [BoardProblem] {
        var found: [BoardProblem] = []
        let family = board.family
        if format == .uf2 {
            let foreign = uf2FamilyIDs.filter { $0 != family.uf2FamilyID }
            if !foreign.isEmpty {
                let named = foreign.map { id in
                    UF2Family.name(of: id).map { "\(Hex.address(id)) (\($0))" } ?? Hex.address(id)
                }
                let needs =
                    family.uf2FamilyID.map { "needs \(Hex.address($0)) (\(family.chipName))" }
                    ?? "has no UF2 family ID (\(family.chipName)), so its UF2 files name none"
                found.append(
                    BoardProblem(
                        .uf2Family,
                        "the UF2 blocks name chip family \(named.joined(separator: ", ")); a \(board.displayName) \(needs)",
                        overridable: true))
            }
        }
        if let mcuboot {
            found += mcuboot.problems(for: board)
        } else if let section = try? section(for: board) {
            found += Self.memoryProblems(section.image, board: board)
            found += Self.vectorTableProblems(section.image, board: board)
        }
        if let package = dfuPackage {
            let flashed =
                package.style == .mcuManager
                ? package.images.first { $0.role == .application && $0.imageIndex == 0 }
                : package.images.first { $0.role == .application }
            let others = package.images.filter { $0 != flashed }
            if !others.isEmpty {
                found.append(
                    BoardProblem(
                        .packageParts,
                        "the DFU package also holds \(others.map(Self.partName).joined(separator: ", ")), "
                            + "which bitflash does not flash: flashing only its application would not give the board what the package describes; use nRF Connect",
                        overridable: false))
            }
        }
        return found
    }

    /// Data where the chip has no memory, and a SoftDevice whose end is not the board's application start.
    static func memoryProblems(_ image: MemoryImage, board: Board) -> [BoardProblem] {
        var found: [BoardProblem] = []
        let layout = board.family.layout
        let outside = image.runs.flatMap { run -> [Range<UInt32>] in
            var parts: [Range<UInt32>] = []
            var from = run.lowerBound
            for allowed in [layout.flash, layout.uicr] where from < run.upperBound {
                if from < allowed.lowerBound { parts.append(from..<min(run.upperBound, allowed.lowerBound)) }
                from = max(from, min(run.upperBound, allowed.upperBound))
            }
            if from < run.upperBound { parts.append(from..<run.upperBound) }
            return parts
        }
        if let first = outside.first {
            let bytes = outside.reduce(0) { $0 + $1.count }
            found.append(
                BoardProblem(
                    .outsideMemory,
                    "the file puts \(grouped(bytes)) bytes at addresses a \(board.displayName) has no memory for "
                        + "(first \(Hex.address(first.lowerBound))-\(Hex.address(first.upperBound))); its flash is \(Hex.address(0))-\(Hex.address(layout.flashSize)) "
                        + "(\(layout.flashSize / 1024) KiB) and its UICR \(Hex.address(layout.uicr.lowerBound))-\(Hex.address(layout.uicr.upperBound)): the file is for a larger chip",
                    overridable: false))
        }
        if let sd = SoftDeviceInfo(in: image), sd.end != layout.applicationStart {
            found.append(
                BoardProblem(
                    .softDevice,
                    "the file holds a SoftDevice (FWID \(Hex.number(sd.firmwareID, digits: 4))) that ends at \(Hex.address(sd.end)); "
                        + "a \(board.displayName) runs its application from \(Hex.address(layout.applicationStart)), right after its own SoftDevice: "
                        + "the file is for another chip or SoftDevice",
                    overridable: false))
        }
        return found
    }
}

extension MCUbootImage {
    /// What says this image is not for `board`'s MCUboot: its size against the primary slot, a
    /// RAM-load or fixed address, and the header size that decides where its application starts.
    /// - Parameter address: where a hex file put the image, when it came from one.
    public func problems(for board: Board, address: UInt32? = nil) -> [BoardProblem] {
        var found: [BoardProblem] = []
        let layout = board.family.layout
        let slot = layout.mcubootPrimarySlot
        let span = "\(Hex.address(slot.lowerBound))-\(Hex.address(slot.upperBound))"
        if length > slot.count {
            found.append(
                BoardProblem(
                    .mcubootSlot,
                    "the MCUboot image is \(grouped(length)) bytes with its header and TLVs; "
                        + "a \(board.displayName)'s primary slot (\(span)) holds \(grouped(slot.count))",
                    overridable: false))
        }
        if header.flags.contains(.ramLoad) {
            found.append(
                BoardProblem(
                    .mcubootSlot,
                    "the MCUboot image is built to be copied to RAM at \(Hex.address(header.loadAddress)) (RAM_LOAD); "
                        + "a \(board.displayName)'s MCUboot runs images in place from its slot at \(Hex.address(slot.lowerBound))",
                    overridable: false))
        } else if header.flags.contains(.romFixed), header.loadAddress != slot.lowerBound {
            found.append(
                BoardProblem(
                    .mcubootSlot,
                    "the MCUboot image is fixed to run from \(Hex.address(header.loadAddress)) (ROM_FIXED); "
                        + "a \(board.displayName)'s primary slot starts at \(Hex.address(slot.lowerBound))",
                    overridable: false))
        }
        if let address, address != slot.lowerBound {
            found.append(
                BoardProblem(
                    .mcubootLayout,
                    "the file puts the MCUboot image at \(Hex.address(address)); a \(board.displayName)'s primary slot starts at \(Hex.address(slot.lowerBound))",
                    overridable: true))
        }
        if Int(header.headerSize) != Int(layout.pageSize) {
            let start = UInt64(slot.lowerBound) + UInt64(header.headerSize)
            found.append(
                BoardProblem(
                    .mcubootLayout,
                    "the MCUboot header is \(Hex.number(header.headerSize, digits: 4)) bytes, so the application would start at "
                        + "\(Hex.address(UInt32(truncatingIfNeeded: start))); a \(board.displayName)'s MCUboot images have a one-page header "
                        + "(\(Hex.number(UInt16(layout.pageSize), digits: 4))) that puts the application at \(Hex.address(layout.applicationStart)), where it is linked: "
                        + "the image was built for another board's layout",
                    overridable: true))
        }
        found += vectorTableProblems(board: board)
        return found
    }
}

/// The SoftDevice information structure a Nordic SoftDevice carries 0x2000 bytes after its start
/// (`SOFTDEVICE_INFO_STRUCT_OFFSET` in the nRF5 SDK's `nrf_sdm.h`), the SoftDevice starting after
/// the 4 KiB MBR: a magic word at +4 (`0x51B1E5DB`), the SoftDevice's end address at +8
/// (`SD_SIZE_GET`, the size counted from address 0) and its firmware ID at +12 (`SD_FWID_GET`).
/// S110 8.0 on micro:bit V1 ends at 0x18000, S113 on micro:bit V2 at 0x1C000.
struct SoftDeviceInfo {
    static let address: UInt32 = 0x3000
    static let magic: UInt32 = 0x51B1_E5DB

    var end: UInt32
    var firmwareID: UInt16

    init?(in image: MemoryImage) {
        let bytes = image.read(Self.address..<(Self.address + 16), fill: 0)
        guard image.hasData(in: (Self.address + 4)..<(Self.address + 16)),
            (try? LEBytes.u32(bytes, 4)) == Self.magic, let end = try? LEBytes.u32(bytes, 8),
            let firmwareID = try? LEBytes.u16(bytes, 12)
        else { return nil }
        self.end = end
        self.firmwareID = firmwareID
    }
}
