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
///
/// A record is read back from disk, where anyone may have edited it: it is checked before use
/// (`validated`), and one that is empty, corrupt or names boards bitflash never made is refused
/// (66, the record cannot be read as one) before anything is flashed.
struct ClassRunRecord: Codable, Equatable {
    var file: String
    var date: String
    var boards: [ClassReport.Row]

    static let fileName = "last-class-run.json"

    /// The folder of the real boards' record: the state folder that holds `resume/`.
    static var realBoardsFolder: URL {
        FileResumeStore.standard().directory.deletingLastPathComponent()
    }

    /// The folder of the simulated boards' record.
    static func simulatedFolder(_ store: SimStore) -> URL { store.directory }

    static func url(in folder: URL) -> URL { folder.appendingPathComponent(fileName) }

    /// The file's path as the record keeps it: absolute, without `.` and `..`.
    static func canonical(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// The record in `folder`, checked; nil when there is none. The simulated boards' record
    /// (any folder but the real boards') names boards of that folder.
    /// - Throws: `CLIError(.cannotRead)` for a record that is empty, corrupt or not valid.
    static func load(from folder: URL) throws -> ClassRunRecord? {
        let url = url(in: folder)
        guard let data = try? Data(contentsOf: url) else { return nil }
        let simulated = folder.standardizedFileURL.path != realBoardsFolder.standardizedFileURL.path
        let record: ClassRunRecord
        do {
            guard !data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
                throw RecordProblem("the file is empty")
            }
            do { record = try JSONDecoder().decode(ClassRunRecord.self, from: data) } catch let error
                as DecodingError
            {
                throw RecordProblem(Self.decodingText(error))
            }
            try record.validate(simulated: simulated ? SimStore(option: folder.path) : nil)
        } catch let problem as RecordProblem {
            throw CLIError(
                .cannotRead,
                "\(url.path) is not a record of a class run bitflash can use: \(problem.text); "
                    + "delete it and flash the class again")
        }
        return record
    }

    private struct RecordProblem: Error {
        let text: String
        init(_ text: String) { self.text = text }
    }

    /// A decoding failure in words, without Foundation's text.
    private static func decodingText(_ error: DecodingError) -> String {
        func at(_ path: [any CodingKey]) -> String {
            path.isEmpty
                ? ""
                : " at "
                    + path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let c) where c.codingPath.isEmpty: return "not valid JSON"
        case .dataCorrupted(let c): return "a value\(at(c.codingPath)) is not valid"
        case .keyNotFound(let key, let c):
            return "the field '\(key.stringValue)'\(at(c.codingPath)) is missing"
        case .typeMismatch(_, let c), .valueNotFound(_, let c):
            return "a field\(at(c.codingPath)) has the wrong type"
        @unknown default: return "not valid JSON"
        }
    }

    /// Checks what is used as a name or a path: each board once, under a name that cannot leave
    /// the folder (no `/`, no `..`), for simulated boards a name the store makes (`sim`, `sim-N`)
    /// of a board that is there; addresses of the form `AA:BB:CC:DD:EE:FF`; results as written.
    private func validate(simulated store: SimStore?) throws {
        guard !boards.isEmpty else { throw RecordProblem("it lists no boards") }
        let saved = store.map { Set($0.savedNames()) } ?? []
        var seen: Set<String> = []
        for row in boards {
            let name = row.board
            if name.isEmpty || name.contains("/") || name.contains("\0") || name == "."
                || name.contains("..")
            {
                throw RecordProblem(
                    "'\(name)' is not the name of a \(store == nil ? "board" : "simulated board") (a name holds no / and no ..)"
                )
            }
            if let store {
                guard SimStore.isBoardName(name) else {
                    throw RecordProblem(
                        "'\(name)' is not the name of a simulated board (bitflash names them sim, sim-1, sim-2, …)"
                    )
                }
                guard saved.contains(name) else {
                    throw RecordProblem("no simulated board '\(name)' in \(store.directory.path)")
                }
            }
            guard seen.insert(name).inserted else {
                throw RecordProblem("it names the board '\(name)' twice")
            }
            if let address = row.address, !Self.isAddress(address) {
                throw RecordProblem(
                    "'\(address)' is not a Bluetooth address (AA:BB:CC:DD:EE:FF), for \(name)")
            }
            guard ["ok", "unverified", "failed"].contains(row.result) else {
                throw RecordProblem(
                    "the result '\(row.result)' of \(name) is none of ok, unverified, failed")
            }
        }
    }

    /// `AA:BB:CC:DD:EE:FF`, six hexadecimal pairs.
    static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    func save(to folder: URL) throws {
        let url = Self.url(in: folder)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try JSONText.data(self).write(to: url, options: .atomic)
        } catch {
            throw CLIError(
                .cannotWrite,
                "cannot save the record of this class run to \(url.path): \(FoundationErrorText.describe(error))")
        }
    }

    /// The boards that failed or were not read back, by the name they were flashed under.
    var failedBoards: [String] { boards.filter { $0.result != "ok" }.map(\.board) }

    /// Keeps `report` as the last run of `file`: a retry (`merging`) replaces only the rows of
    /// the boards it flashed again; otherwise the report replaces the record.
    static func keep(_ report: ClassReport, file: String, merging: Bool, in folder: URL) {
        var record = ClassRunRecord(
            file: canonical(file), date: ISO8601DateFormatter().string(from: Date()),
            boards: report.boards)
        if merging, let old = try? load(from: folder), old.file == record.file {
            let new = Dictionary(report.boards.map { ($0.board, $0) }, uniquingKeysWith: { a, _ in a })
            record.boards = old.boards.map { new[$0.board] ?? $0 }
        }
        do { try record.save(to: folder) } catch {
            StdErr.write("bitflash: warning: \(describe(error))\n")
        }
    }
}

extension SimStore {
    /// True for a name the store gives a board: `sim`, or `sim-N` with N from 1, no leading zero.
    static func isBoardName(_ name: String) -> Bool {
        if name == "sim" { return true }
        guard name.hasPrefix("sim-"), let n = Int(name.dropFirst(4)), n >= 1 else { return false }
        return name == "sim-\(n)"
    }
}
