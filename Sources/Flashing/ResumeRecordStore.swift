import Diagnostics
import Foundation
import PartialFlashing
import PartialFlashingFrames
import Transport

/// Where a program keeps the points interrupted partial flashes can continue from, one per
/// board, between runs.
///
/// A flash reports each new point as `FlowReport.checkpoint`; the program saves it under the
/// board's key and gives it back as `FlashPlan.resume` the next time it flashes that board.
/// One record per board, not per program: an unfinished write of any program leaves the same
/// all-0xFF program hash on the board, so only the latest record describes what the board holds.
/// The session checks the board's memory map against a record before it trusts it, so a stale
/// record costs nothing but a note.
///
/// `FileResumeStore` keeps them as small JSON files; implement this protocol to keep them
/// elsewhere (a database, a teacher's shared folder, memory).
public protocol ResumeRecordStore: Sendable {
    /// The record of `board`, or nil when there is none.
    /// - Throws: when a record exists but cannot be read; the flash then starts from the
    ///   beginning and reports the error as a warning.
    func load(board: String) throws -> ResumePoint?
    /// Saves `point` as the record of `board`, replacing any earlier one.
    func save(_ point: ResumePoint, board: String) throws
    /// Removes the record of `board`, if any.
    func forget(board: String) throws
    /// The finish record of `board` (FinishRecordStore.swift), or nil. Default: none kept.
    func loadFinish(board: String) throws -> FinishRecord?
    /// Saves `record` as the finish record of `board`. Default: not kept.
    func saveFinish(_ record: FinishRecord, board: String) throws
    /// Removes the finish record of `board`, if any.
    func forgetFinish(board: String) throws
}

/// Resume records as one small JSON file per board in a folder.
public struct FileResumeStore: ResumeRecordStore {
    /// The folder holding the records.
    public let directory: URL

    /// A store in `directory` (created when the first record is saved).
    public init(directory: URL) { self.directory = directory }

    /// The standard folder for real boards: `$BITFLASH_STATE/resume`, else
    /// `$XDG_STATE_HOME/bitflash/resume`, else `~/.local/state/bitflash/resume`.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> FileResumeStore
    {
        if let dir = environment["BITFLASH_STATE"], !dir.isEmpty {
            return FileResumeStore(directory: URL(fileURLWithPath: dir).appendingPathComponent("resume"))
        }
        if let xdg = environment["XDG_STATE_HOME"], !xdg.isEmpty {
            return FileResumeStore(directory: URL(fileURLWithPath: xdg).appendingPathComponent("bitflash/resume"))
        }
        return FileResumeStore(
            directory: FileManager.default.homeDirectoryForCurrentUser
                .appendingPathComponent(".local/state/bitflash/resume"))
    }

    /// The file of `board` (an address or a name; characters a file name should not hold become `_`).
    public func url(board: String) -> URL {
        let safe = String(board.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" })
        return directory.appendingPathComponent("\(safe).json")
    }

    /// The record in `board`'s file, nil when there is none.
    /// - Throws: `ResumeStoreError.unreadable` when the file is not a resume record.
    public func load(board: String) throws -> ResumePoint? {
        let url = url(board: board)
        guard let data = try? Data(contentsOf: url) else { return nil }
        do {
            return try JSONDecoder().decode(ResumePoint.self, from: data)
        } catch {
            throw ResumeStoreError.unreadable(path: url.path)
        }
    }

    /// Writes `point` (with `board` filled in) to `board`'s file, atomically.
    /// - Throws: `ResumeStoreError.cannotSave`.
    public func save(_ point: ResumePoint, board: String) throws {
        let url = url(board: board)
        var point = point
        point.board = board
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try JSONText.data(point).write(to: url, options: .atomic)
        } catch {
            throw ResumeStoreError.cannotSave(path: url.path, reason: FoundationErrorText.describe(error))
        }
    }

    /// Removes `board`'s file, if any.
    /// - Throws: `ResumeStoreError.cannotSave` when it exists and cannot be removed.
    public func forget(board: String) throws {
        let url = url(board: board)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            throw ResumeStoreError.cannotSave(path: url.path, reason: FoundationErrorText.describe(error))
        }
    }
}

/// A resume record could not be read or written.
public enum ResumeStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The record exists but is not a resume record; it is ignored, never trusted.
    case unreadable(path: String)
    /// The record could not be written or removed.
    case cannotSave(path: String, reason: String)

    /// What happened to the record, and what bitflash does about it.
    public var description: String {
        switch self {
        case let .unreadable(path):
            return "ignoring \(path): not a resume record; the flash starts from the beginning"
        case let .cannotSave(path, reason):
            return "cannot save where this flash could continue to \(path): \(reason)"
        }
    }
}

extension ResumeStoreError: DomainError {
    /// An unreadable record only costs a fresh start; a record that cannot be written is a file problem.
    public var failureKind: FailureKind {
        switch self {
        case .unreadable: return .unreadable
        case .cannotSave: return .unwritable
        }
    }
}
