import Flashing
import Foundation
import SimulatedBoard
import Transport

/// Continuing interrupted partial flashes of simulated boards across runs, and the simulated
/// interruption. (Real boards: `BlueZFlasher` does the same with `FileResumeStore.standard()`.)
extension FlashCommand {
    /// `plan` for board `name` with the point an earlier run saved (none with --no-resume,
    /// which also forgets it).
    func withResume(_ plan: FlashPlan, board name: String, store: FileResumeStore) -> FlashPlan {
        var plan = plan
        if noResume {
            store.forgetQuietly(board: name)
            return plan
        }
        plan.resume = store.load(board: name) { StdErr.write("bitflash: \($0)\n") }
        plan.finished = try? store.loadFinish(board: name)
        return plan
    }

    /// Keeps a board's latest checkpoint (nil: the flash left nothing unfinished), after the board is saved.
    static func keep(_ point: ResumePoint?, board: String, in store: FileResumeStore) {
        do {
            if let point { try store.save(point, board: board) } else { try store.forget(board: board) }
        } catch {
            StdErr.write("bitflash: warning: \(error)\n")
        }
    }

    /// A board read back running its program has nothing unfinished; one not read back keeps its
    /// point (its END_OF_TRANSMISSION may not have arrived: the next run then rewrites one page,
    /// and a board found running its program forgets the point).
    static func forgetFinished(_ results: [FlashResult], in store: FileResumeStore) {
        for r in results where r.error == nil && r.verification != .unverified { store.forgetQuietly(board: r.board) }
    }

    /// The result of a run stopped by `--sim-kill-at`: what a killed bitflash leaves behind.
    static func killed(_ result: FlashResult, at: Duration) -> FlashResult {
        var r = result
        r.error =
            "bitflash was stopped at \(at.seconds) s (modelled, --sim-kill-at) as if killed; the board keeps "
            + "what it received: run the same command again to continue"
        return r
    }
}
