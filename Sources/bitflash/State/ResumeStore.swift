import Foundation
import Laboratory
import Transport

/// Where bitflash keeps what it needs to continue an interrupted partial flash: one small JSON
/// file per board (`ResumePoint`: the program, the board's runtime and program region, the
/// block to continue from), in `resume/` of the state folder. Simulated boards keep theirs next
/// to the boards (`--sim-state DIR/resume`). One file per board, not per program: a write of
/// another program replaces it, because an unfinished write of any program leaves the same
/// all-0xFF program hash on the board, and only the latest one describes what the board holds.
struct ResumeStore: Sendable {
    let directory: URL

    init(directory: URL) { self.directory = directory }

    /// The resume folder of real boards: `$BITFLASH_STATE/resume`, else
    /// `$XDG_STATE_HOME/bitflash/resume`, else `~/.local/state/bitflash/resume`. Records are
    /// kept by board address.
    static var realBoards: ResumeStore {
        let env = ProcessInfo.processInfo.environment
        if let dir = env["BITFLASH_STATE"], !dir.isEmpty {
            return ResumeStore(directory: URL(fileURLWithPath: dir).appendingPathComponent("resume"))
        }
        if let xdg = env["XDG_STATE_HOME"], !xdg.isEmpty {
            return ResumeStore(directory: URL(fileURLWithPath: xdg).appendingPathComponent("bitflash/resume"))
        }
        return ResumeStore(directory: FileManager.default.homeDirectoryForCurrentUser
            .appendingPathComponent(".local/state/bitflash/resume"))
    }

    /// The resume folder next to the simulated boards of `store`.
    init(simulated store: SimStore) { directory = store.directory.appendingPathComponent("resume") }

    /// The file of the board called `name` (its address when it has one).
    func url(board: String) -> URL {
        let safe = String(board.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" })
        return directory.appendingPathComponent("\(safe).json")
    }

    /// The saved point of `board`, or nil (none, or unreadable: an unreadable record is ignored
    /// with a note, never trusted).
    func load(board: String, note: (String) -> Void = { _ in }) -> ResumePoint? {
        let url = url(board: board)
        guard let data = try? Data(contentsOf: url) else { return nil }
        guard let point = try? JSONDecoder().decode(ResumePoint.self, from: data) else {
            note("ignoring \(url.path): not a resume record; the flash starts from the beginning")
            return nil
        }
        return point
    }

    /// Saves `point` for `board`, or forgets the saved one when `point` is nil.
    func save(_ point: ResumePoint?, board: String) throws {
        let url = url(board: board)
        guard var point else {
            forget(board: board)
            return
        }
        point.board = board
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try JSONText.data(point).write(to: url, options: .atomic)
        } catch {
            throw CLIError(.cannotWrite, "cannot save where this flash could continue to \(url.path): \(error.localizedDescription)")
        }
    }

    func forget(board: String) {
        try? FileManager.default.removeItem(at: url(board: board))
    }
}
