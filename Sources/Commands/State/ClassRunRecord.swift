import Diagnostics
import Flashing
import Foundation
import Laboratory

/// The record of the last class run (a flash of several boards), which `flash --retry-failed`
/// reads: the file (as an absolute path) and each board's row of the class report. Kept as
/// `last-class-run.json` in the state folder: next to the simulated boards (`--sim-state DIR`)
/// for simulated boards, next to the real boards' `resume/` folder for real ones. A retry
/// updates the rows of the boards it flashed again, so that the record always says which
/// boards of the class still need the file.
struct ClassRunRecord: Codable, Equatable {
    var file: String
    var date: String
    var boards: [ClassReport.Row]

    static let fileName = "last-class-run.json"

    /// The folder of the real boards' record: the state folder that holds `resume/`.
    static var realBoardsFolder: URL { FileResumeStore.standard().directory.deletingLastPathComponent() }

    /// The folder of the simulated boards' record.
    static func simulatedFolder(_ store: SimStore) -> URL { store.directory }

    static func url(in folder: URL) -> URL { folder.appendingPathComponent(fileName) }

    /// The file's path as the record keeps it: absolute, without `.` and `..`.
    static func canonical(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    /// The record in `folder`, nil when there is none.
    static func load(from folder: URL) throws -> ClassRunRecord? {
        let url = url(in: folder)
        guard let data = try? Data(contentsOf: url) else { return nil }
        do {
            return try JSONDecoder().decode(ClassRunRecord.self, from: data)
        } catch {
            throw CLIError(
                .badFirmware,
                "\(url.path) is not a record of a class run (\(error.localizedDescription)); "
                    + "delete it and flash the class again")
        }
    }

    func save(to folder: URL) throws {
        let url = Self.url(in: folder)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try JSONText.data(self).write(to: url, options: .atomic)
        } catch {
            throw CLIError(
                .cannotWrite, "cannot save the record of this class run to \(url.path): \(error.localizedDescription)")
        }
    }

    /// The boards that failed or were not read back, by the name they were flashed under.
    var failedBoards: [String] { boards.filter { $0.result != "ok" }.map(\.board) }

    /// Keeps `report` as the last run of `file`: a retry (`merging`) replaces only the rows of
    /// the boards it flashed again; otherwise the report replaces the record.
    static func keep(_ report: ClassReport, file: String, merging: Bool, in folder: URL) {
        var record = ClassRunRecord(
            file: canonical(file), date: ISO8601DateFormatter().string(from: Date()), boards: report.boards)
        if merging, let old = try? load(from: folder), old.file == record.file {
            let new = Dictionary(report.boards.map { ($0.board, $0) }, uniquingKeysWith: { a, _ in a })
            record.boards = old.boards.map { new[$0.board] ?? $0 }
        }
        do { try record.save(to: folder) } catch { StdErr.write("bitflash: warning: \(describe(error))\n") }
    }
}
