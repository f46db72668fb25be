import Flashing
import Foundation
import Laboratory
import PartialFlashingFrames
import Transport

/// Where bitflash keeps what it needs to continue an interrupted partial flash: the library's
/// `FileResumeStore` (one small JSON file per board). Real boards keep theirs in the standard
/// state folder (`FileResumeStore.standard()`, by address); simulated boards next to the boards
/// (`--sim-state DIR/resume`, by name).
extension FileResumeStore {
    /// The resume folder next to the simulated boards of `store`.
    init(simulated store: SimStore) { self.init(directory: store.directory.appendingPathComponent("resume")) }

    /// The saved point of `board`, or nil (none, or unreadable: an unreadable record is ignored
    /// with a note, never trusted).
    func load(board: String, note: (String) -> Void) -> ResumePoint? {
        do { return try load(board: board) } catch {
            note("\(error)")
            return nil
        }
    }

    /// Forgets the record of `board`; a record that cannot be removed is only warned about.
    func forgetQuietly(board: String) {
        do { try forget(board: board) } catch { StdErr.write("bitflash: warning: \(error)\n") }
    }
}
