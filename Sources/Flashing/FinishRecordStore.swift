import Diagnostics
import Foundation
import PartialFlashing

/// The finish records (`FinishRecord`) beside the resume records: one per board, saying which
/// program this computer last finished on it. A session takes a board in application mode that
/// reports the file's program at its word only when the board's record names that program
/// (`FlashPlan.finished`); any other board is restarted into its program to confirm it.
///
/// Save `SessionOutcome.finishRecord(board:at:)` after every session that returns one, and
/// forget the board's record after any other session that may have written to it, so that a
/// record never outlives what it vouches for.
extension ResumeRecordStore {
    /// Stores with no place for finish records keep none: every up-to-date board is confirmed.
    public func loadFinish(board: String) throws -> FinishRecord? { nil }
    public func saveFinish(_ record: FinishRecord, board: String) throws {}
    public func forgetFinish(board: String) throws {}
}

extension ResumeRecordStore {
    /// Keeps what `session` says of `board`: its finish record when it verified the board running
    /// its program, else none (the session may have written to it). A failure is a warning.
    public func keepFinish(
        after session: Result<SessionOutcome, any Error>, board: String, warn: (String) -> Void
    ) {
        do {
            if case let .success(outcome) = session,
                let record = outcome.finishRecord(board: board, at: Date().formatted(.iso8601))
            {
                try saveFinish(record, board: board)
            } else {
                try forgetFinish(board: board)
            }
        } catch {
            warn("\(error)")
        }
    }
}

extension FileResumeStore {
    /// The file of `board`'s finish record: in the `finished` folder beside the resume records.
    public func finishURL(board: String) -> URL {
        let name = url(board: board).lastPathComponent
        return directory.appendingPathComponent("finished").appendingPathComponent(name)
    }

    /// The finish record of `board`, nil when there is none.
    /// - Throws: `ResumeStoreError.unreadable` when the file is not a finish record.
    public func loadFinish(board: String) throws -> FinishRecord? {
        let url = finishURL(board: board)
        guard let data = try? Data(contentsOf: url) else { return nil }
        do {
            return try JSONDecoder().decode(FinishRecord.self, from: data)
        } catch {
            throw ResumeStoreError.unreadable(path: url.path)
        }
    }

    /// Writes `record` as `board`'s finish record, atomically.
    /// - Throws: `ResumeStoreError.cannotSave`.
    public func saveFinish(_ record: FinishRecord, board: String) throws {
        let url = finishURL(board: board)
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try JSONText.data(record).write(to: url, options: .atomic)
        } catch {
            throw ResumeStoreError.cannotSave(path: url.path, reason: FoundationErrorText.describe(error))
        }
    }

    /// Removes `board`'s finish record, if any.
    /// - Throws: `ResumeStoreError.cannotSave` when it exists and cannot be removed.
    public func forgetFinish(board: String) throws {
        let url = finishURL(board: board)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            throw ResumeStoreError.cannotSave(path: url.path, reason: FoundationErrorText.describe(error))
        }
    }
}
