import Diagnostics
import Flashing
import Foundation

/// The record of the last class run (a flash of several boards), from which a retry takes the
/// boards that still need the file (`flash --retry-failed`): the file (as an absolute path) and
/// each board's row of the class's report. Kept as `last-class-run.json` in a state folder: next
/// to the simulated boards for simulated boards, next to the real boards' `resume/` folder for
/// real ones. A retry updates the rows of the boards it flashed again, so that the record always
/// says which boards of the class still need the file.
///
/// A record is read back from disk, where anyone may have edited it: it is checked before use,
/// and one that is empty, corrupt or names boards that were never made is refused
/// (`ClassRunRecordError.unusable`) before anything is flashed.
public struct ClassRunRecord: Codable, Sendable, Equatable {
    /// One board of the class as its report gave it.
    public struct Row: Codable, Sendable, Equatable {
        /// The board as it was flashed: a `--device` value, a scanned address, or a simulated name.
        public var board: String
        public var name: String?
        public var address: String?
        /// The adapter the board was flashed through (`hci0`).
        public var adapter: String?
        /// `ok` (flashed and read back), `unverified` (written, not read back) or `failed`.
        public var result: String
        public var path: FlashPath?
        /// True when partial flashing was given up and a full update followed.
        public var fallback: Bool
        public var seconds: Double
        /// True when the board was read back and runs the new program.
        public var verified: Bool
        public var exitCode: Int32
        public var error: String?
        /// For a failure: what to do, in one line.
        public var fix: String?

        public init(
            board: String, name: String?, address: String?, adapter: String?, result: String, path: FlashPath?,
            fallback: Bool, seconds: Double, verified: Bool, exitCode: Int32, error: String?, fix: String?
        ) {
            self.board = board
            self.name = name
            self.address = address
            self.adapter = adapter
            self.result = result
            self.path = path
            self.fallback = fallback
            self.seconds = seconds
            self.verified = verified
            self.exitCode = exitCode
            self.error = error
            self.fix = fix
        }
    }

    public var file: String
    public var date: String
    public var boards: [Row]

    public static let fileName = "last-class-run.json"

    public init(file: String, date: String = ISO8601DateFormatter().string(from: Date()), boards: [Row]) {
        self.file = Self.canonical(file)
        self.date = date
        self.boards = boards
    }

    /// The folder of the real boards' record: the state folder that holds `resume/`.
    public static var realBoardsFolder: URL {
        FileResumeStore.standard().directory.deletingLastPathComponent()
    }

    public static func url(in folder: URL) -> URL { folder.appendingPathComponent(fileName) }

    /// The file's path as the record keeps it: absolute, without `.` and `..`.
    public static func canonical(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// The boards that failed or were not read back, by the name they were flashed under.
    public var failedBoards: [String] { boards.filter { $0.result != "ok" }.map(\.board) }

    /// What a retry of `file` flashes, by this record.
    public enum Retry: Sendable, Equatable {
        /// These boards failed or were not read back.
        case boards([String])
        /// Every board of the class was flashed and read back.
        case nothingFailed
        /// The record is of another file (the one it names).
        case otherFile(String)
    }

    /// The boards a retry of `file` flashes again.
    public func retry(file: String) -> Retry {
        guard self.file == Self.canonical(file) else { return .otherFile(self.file) }
        let failed = failedBoards
        return failed.isEmpty ? .nothingFailed : .boards(failed)
    }

    /// The record in `folder`, checked; nil when there is none.
    /// - Parameter simulatedBoards: for simulated boards' record, the boards saved in that
    ///   folder (a row must name one of them); nil for real boards.
    /// - Throws: `ClassRunRecordError.unusable` for a record that is empty, corrupt or not valid.
    public static func load(from folder: URL, simulatedBoards: Set<String>? = nil) throws -> ClassRunRecord? {
        let url = url(in: folder)
        guard let data = try? Data(contentsOf: url) else { return nil }
        guard !data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            throw ClassRunRecordError.unusable(path: url.path, reason: "the file is empty")
        }
        let record: ClassRunRecord
        do { record = try JSONDecoder().decode(ClassRunRecord.self, from: data) } catch let error as DecodingError {
            throw ClassRunRecordError.unusable(path: url.path, reason: decodingText(error))
        }
        if let problem = record.problem(simulatedBoards: simulatedBoards, folder: folder) {
            throw ClassRunRecordError.unusable(path: url.path, reason: problem)
        }
        return record
    }

    /// Keeps `rows` as the last run of `file` in `folder`: a retry (`merging`) replaces only the
    /// rows of the boards it flashed again; otherwise they replace the record.
    /// - Parameter simulatedBoards: as for `load`.
    /// - Throws: `ClassRunRecordError.cannotSave`.
    public static func keep(
        _ rows: [Row], file: String, merging: Bool, in folder: URL, simulatedBoards: Set<String>? = nil
    ) throws {
        var record = ClassRunRecord(file: file, boards: rows)
        if merging, let old = try? load(from: folder, simulatedBoards: simulatedBoards), old.file == record.file {
            let new = Dictionary(rows.map { ($0.board, $0) }, uniquingKeysWith: { a, _ in a })
            record.boards = old.boards.map { new[$0.board] ?? $0 }
        }
        try record.save(to: folder)
    }

    public func save(to folder: URL) throws {
        let url = Self.url(in: folder)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try JSONText.data(self).write(to: url, options: .atomic)
        } catch {
            throw ClassRunRecordError.cannotSave(path: url.path, reason: FoundationErrorText.describe(error))
        }
    }
}
