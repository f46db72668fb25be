import FirmwareImage
import LinkModel
import PartialFlashing

/// The plan for a file without a board (`bitflash plan`): what each path would send and how
/// long it would take over each standard link profile.
///
/// Partial flashing is planned against a board that runs the file's runtime and declares the
/// program region from the file's program start up to the scratch page (what MakeCode boards
/// declare); the full update uploads the MCUboot image made from the file.
public struct BoardlessPlan: Sendable, Equatable, Codable {
    public var board: String
    public var chip: String
    /// The program region partial flashing writes, when the file has a program.
    public var region: Range<UInt32>?
    /// The partial path's blocks, pages and bytes (empty when partial flashing is impossible).
    public var partial: [String: Int]
    /// Bytes of the full update's MCUboot image (nil when none can be made).
    public var fullImageBytes: Int?
    public var byProfile: [ProfileEstimates]
    /// What the estimates assume, one sentence each.
    public var notes: [String]

    /// Plans `plan` for `board`.
    public static func make(_ plan: FlashPlan, board: Board, options: FlashOptions = FlashOptions()) -> BoardlessPlan {
        var estimators: [any PathEstimator] = []
        var partialCounts: [String: Int] = [:]
        var region: Range<UInt32>?
        var notes: [String] = [
            "Times run from the connection to the board running the new program, on a board in pairing mode; "
                + "a board that runs its program first restarts in pairing mode (one connection setup, the reboot and 3 intervals more on every path).",
        ]
        if let program = plan.program {
            let declared = RegionInfo(id: 2, start: program.magicAddress, end: plan.family.layout.scratchPage, hash: program.programHash)
            if let blocks = try? BlockPlan(image: plan.image, program: program, boardRegion: declared, family: plan.family,
                                           skipErasedBlocks: options.partial.skipErasedBlocks,
                                           sealProgramHash: options.partial.sealProgramHash) {
                let p = PartialEstimator(plan: blocks, verifies: options.partial.verifyAfterFlash)
                estimators.append(p)
                partialCounts = ["blocks": p.blocks, "pages": p.pagesOpened, "bytes": blocks.byteCount]
                region = program.region
                notes.append("Partial flashing needs a board that runs runtime \(program.runtimeHash.hexString) with its program at \(hex32(program.magicAddress)).")
            }
        } else {
            notes.append("The file holds no MakeCode program: only a full update can write it.")
        }
        if let image = plan.fullImage {
            let m = McuMgrEstimator(imageBytes: image.bytes.count, options: options.mcumgr)
            estimators.append(m)
            notes.append("McuMgr: a board with the SMP service; buffers assumed \(McuMgrEstimator.assumedBuffers.count) × \(McuMgrEstimator.assumedBuffers.size) bytes, MTU 247.")
        }
        return BoardlessPlan(board: board.displayName, chip: plan.family.chipName, region: region, partial: partialCounts,
                             fullImageBytes: plan.fullImage?.bytes.count,
                             byProfile: PlanEstimates.byProfile(estimators, board: BoardCosts(family: plan.family)), notes: notes)
    }
}

private func hex32(_ v: UInt32) -> String {
    let digits = String(v, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}
