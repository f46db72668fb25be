import Foundation
import PartialFlashing
import PartialFlashingFrames
import Transport

/// bitflash's policy for resume records, one for every backend (real boards through BlueZ,
/// simulated boards): what a flash starts from, what it keeps, what it forgets.
///
/// A flash starts from the board's record (none when told to start over, which forgets it; an
/// unreadable record is reported, never trusted) and from its finish record; it keeps each
/// checkpoint the session reports (nil: nothing left unfinished); a board read back running its
/// program forgets its record, and one not read back keeps it (its END_OF_TRANSMISSION may not
/// have arrived: the next flash then rewrites one page).
public struct ResumeRecords: Sendable {
    public var store: any ResumeRecordStore
    /// Forget any record and start a partial flash from its first block.
    public var startOver: Bool

    public init(store: any ResumeRecordStore, startOver: Bool = false) {
        self.store = store
        self.startOver = startOver
    }

    /// `plan` for `board` with its resume point and finish record; `warn` gets each record that
    /// cannot be read or forgotten.
    public func plan(_ plan: FlashPlan, board: String, warn: (String) -> Void) -> FlashPlan {
        var plan = plan
        do {
            if startOver {
                try store.forget(board: board)
            } else {
                plan.resume = try store.load(board: board)
            }
        } catch {
            warn("\(error)")
        }
        // The program this computer last finished on the board, if any: a board reporting it is
        // taken at its word; any other up-to-date board is restarted to confirm it.
        plan.finished = try? store.loadFinish(board: board)
        return plan
    }

    /// Keeps `board`'s latest checkpoint (nil: the flash left nothing unfinished).
    public func keep(_ point: ResumePoint?, board: String) throws {
        if let point { try store.save(point, board: board) } else { try store.forget(board: board) }
    }

    /// After a flash of `board` ended with `session` and `result`: keeps its finish record, and
    /// forgets its resume record when it was read back running its program.
    public func finish(
        _ result: FlashResult, session: Result<SessionOutcome, any Error>, board: String, warn: (String) -> Void
    ) {
        store.keepFinish(after: session, board: board, warn: warn)
        guard result.error == nil, result.verification != .unverified else { return }
        do { try store.forget(board: board) } catch { warn("\(error)") }
    }
}
