import FirmwareImage
import McuMgr
import NordicDFU
import PartialFlashing
import PartialFlashingFrames
import SMP
import Transport

/// How a whole session ended: the path, why, and what it cost.
public struct SessionOutcome: Sendable, Equatable {
    public var path: FlashPath
    public var reason: FlashReason
    /// True when partial flashing was tried, gave up, and the full update followed.
    public var fallback: Bool
    public var partial: PartialFlashStats?
    public var full: McuMgrResult?
    /// The estimates of the possible paths and the choice among them, once made.
    public var decision: PathDecision?
    /// True when the session only planned (`FlashOptions.dryRun`): nothing was written.
    public var dryRun = false
    /// The program region partial flashing writes (or would write), when the board's map was read.
    public var region: Range<UInt32>?
    /// Set when the full update was a Nordic DFU.
    public var nordic: NordicDFUResult? = nil
    /// What reading the board back found, when that decided the verification: an up-to-date
    /// board, or the board after a full update (`ProgramCheck`). Nil for a partial write, whose
    /// stats say it, and for a full update that was not read back this way.
    public var readBack: Verification? = nil
    /// The page rewrites that cleared `flashIncomplete` after a full update (nil when none).
    public var rewrites: PartialFlashStats? = nil
    /// How an up-to-date board was confirmed (nil on the other paths).
    public var confirmation: UpToDateConfirmation? = nil
    /// The program (hex of its program hash) the board was read back running in application
    /// mode at the end of the session; nil when the session did not verify one.
    public var verifiedProgram: String? = nil

    /// The finish record to save for `board` after this session (`ResumeRecordStore.saveFinish`),
    /// stamped `at`; nil when the session did not verify the board running its program, and
    /// the board's record must then be forgotten.
    public func finishRecord(board: String, at: String) -> FinishRecord? {
        guard !dryRun, verified, let hash = verifiedProgram else { return nil }
        return FinishRecord(board: board, programHash: hash, finishedAt: at)
    }

    /// Which full-update path ran, if any.
    public var fullPath: FullUpdatePath? { nordic != nil ? .nordic : (full != nil ? .mcumgr : nil) }
    public var bytesSent: Int {
        (partial?.bytes ?? 0) + (full?.bytesSent ?? 0) + (nordic?.bytesSent ?? 0) + (rewrites?.bytes ?? 0)
    }
    public var retries: Int {
        (partial?.retries ?? 0) + (full?.retries ?? 0) + (nordic?.retries ?? 0) + (rewrites?.retries ?? 0)
    }
    /// True when the board was read back running the new program in application mode (see
    /// `FlashVerification.verified`).
    public var verified: Bool {
        if dryRun { return false }
        if let readBack { return readBack == .verified }
        switch path {
        case .upToDate: return true
        case .partial: return partial?.verified ?? false
        case .full: return full.map { !$0.finalSlots.isEmpty } ?? nordic?.verified ?? false
        }
    }
    /// Why the result is not verified (nil when it is, and for a dry run).
    public var unverifiedReason: String? {
        guard !dryRun, !verified else { return nil }
        if case let .unverified(why)? = readBack { return why }
        // A partial write says why itself; none said is a writer's fault, left for checks to find.
        if path == .partial { return partial?.unverifiedReason }
        return "the board was not read back after the update"
    }
}
