import Diagnostics
import FirmwareImage
import LinkModel
import McuMgr
import NordicDFU
import NordicDFUFrames
import PartialFlashing
import PartialFlashingFrames

/// The plan for a file without a board (`bitflash plan`): what each path would send and how
/// long it would take over each standard link profile.
///
/// Partial flashing is planned against a board that runs the file's runtime and declares the
/// program region from the file's program start up to the scratch page (what MakeCode boards
/// declare); the full update over McuMgr uploads the MCUboot image made from the file, the one
/// through a stock board's Nordic bootloader the application binary cut from it (Secure DFU on
/// nRF52833, legacy DFU on nRF51).
public struct BoardlessPlan: Sendable, Equatable, Codable {
    public var board: String
    public var chip: String
    /// The program region partial flashing writes, when the file has a program.
    public var region: Range<UInt32>?
    /// The partial path's blocks, pages and bytes (empty when partial flashing is impossible).
    public var partial: [String: Int]
    /// Bytes of the full update's MCUboot image (nil when none can be made).
    public var fullImageBytes: Int?
    /// Bytes of the application a Nordic DFU sends (nil when the file has none for the board).
    public var nordicApplicationBytes: Int?
    /// Each path over each profile, for a board in pairing mode (as after A+B and reset).
    public var byProfile: [ProfileEstimates]
    /// The same for a board that runs its program: partial flashing restarts it in pairing mode
    /// first (`FF 00`, the reboot, a new connection and the memory map read again).
    public var fromProgram: [ProfileEstimates] = []
    /// Paths left out of the estimates, and why (an McuMgr image that cannot be installed on the board).
    public var excluded: [ExcludedPath] = []
    /// What the estimates assume, one sentence each.
    public var notes: [String]

    /// Plans `plan` for `board`.
    public static func make(_ plan: FlashPlan, board: Board, options: FlashOptions = FlashOptions()) -> BoardlessPlan {
        var estimators: [any PathEstimator] = []
        var partialCounts: [String: Int] = [:]
        var region: Range<UInt32>?
        var notes: [String] = [
            "Times run from the connection to the board running the new program: first for a board in pairing mode, "
                + "then for a board that runs its program, which partial flashing first restarts in pairing mode."
        ]
        var partialFromProgram: PartialEstimator?
        if let program = plan.program {
            let declared = RegionInfo(
                id: 2, start: program.magicAddress, end: plan.family.layout.scratchPage, hash: program.programHash)
            if let blocks = try? BlockPlan(
                image: plan.image, program: program, boardRegion: declared, family: plan.family,
                skipErasedBlocks: options.partial.skipErasedBlocks,
                sealProgramHash: options.partial.sealProgramHash)
            {
                let p = PartialEstimator(plan: blocks, verifies: options.partial.verifyAfterFlash)
                estimators.append(p)
                partialFromProgram = PartialEstimator(
                    plan: blocks, verifies: options.partial.verifyAfterFlash, switchesToPairingMode: true)
                partialCounts = ["blocks": p.blocks, "pages": p.pagesOpened, "bytes": blocks.byteCount]
                region = program.region
                notes.append(
                    "Partial flashing needs a board that runs runtime \(program.runtimeHash.hexString) with its program at \(Hex.address(program.magicAddress))."
                )
            }
        } else {
            notes.append("The file holds no MakeCode program: only a full update can write it.")
        }
        var excluded: [ExcludedPath] = []
        if let image = plan.fullImage {
            let slot = options.mcumgr.slotSize ?? .profile(plan.family)
            if let problem = image.problem(slot: slot) {
                // The board would refuse it (or MCUboot would): no estimate for a path that cannot succeed.
                excluded.append(ExcludedPath(path: .mcumgr, reason: "the image cannot be installed: \(problem)"))
                notes.append("McuMgr excluded: the image cannot be installed: \(problem).")
            } else {
                estimators.append(McuMgrEstimator(imageBytes: image.bytes.count, options: options.mcumgr))
                notes.append(
                    "McuMgr: a board with the SMP service; buffers assumed \(McuMgrEstimator.assumedBuffers.count) × \(McuMgrEstimator.assumedBuffers.size) bytes, MTU 247; "
                        + "its slot holds \(slot.bytes) bytes (\(slot.source.rawValue)).")
            }
        }
        let application = try? DFUApplication.cut(from: plan.image, family: plan.family)
        if let application {
            let secure = plan.family == .nrf52833
            estimators.append(
                NordicDFUEstimator(
                    applicationBytes: application.bytes.count, protocol: secure ? .secure : .legacy,
                    options: options.nordic))
            let n = options.nordic
            let how =
                secure
                ? "Secure DFU in objects of 4 KiB, packets paced by the bootloader's flash queue "
                    + "(\(n.secureFlashQueue) entries, \(n.pageErase.millisecondsText) ms per page erase)"
                    + (n.securePacketReceipts == 0 ? "" : ", a receipt every \(n.securePacketReceipts) packets")
                : "legacy DFU, the whole application erased at Start, 20-byte packets, a receipt every \(n.legacyPacketReceipts)"
            notes.append(
                "Nordic DFU: a stock board's bootloader (\(how)), \(n.reconnectDelay.millisecondsText) ms before each reconnection."
            )
        }
        let costs = BoardCosts(family: plan.family)
        let running: [any PathEstimator] = estimators.map { e in
            e is PartialEstimator ? (partialFromProgram.map { $0 as any PathEstimator } ?? e) : e
        }
        var made = BoardlessPlan(
            board: board.displayName, chip: plan.family.chipName, region: region, partial: partialCounts,
            fullImageBytes: plan.fullImage?.bytes.count, nordicApplicationBytes: application?.bytes.count,
            byProfile: PlanEstimates.byProfile(estimators, board: costs),
            excluded: excluded, notes: notes)
        made.fromProgram = PlanEstimates.byProfile(running, board: costs)
        return made
    }
}
