import Diagnostics
import Foundation

/// The trace file format: one JSON object per line, `{"t": µs, "board": index, "name": board name,
/// "kind": ..., "text": ...}`, in time order; first a `meta` line holding a `TraceHeader`, last one
/// `result` line per board holding a `TraceResult`.
public enum TraceFile {
    /// One line of a trace file.
    public struct Line: Codable, Sendable, Equatable {
        /// Microseconds since the start of the run.
        public var t: Int64
        /// The board's index in the run, or -1 for none.
        public var board: Int
        public var name: String
        public var kind: String
        public var text: String

        public init(t: Int64, board: Int, name: String, kind: String, text: String) {
            self.t = t
            self.board = board
            self.name = name
            self.kind = kind
            self.text = text
        }
    }

    /// The text of `trace` as a file: a `meta` line with `header` first (when given), then the
    /// run's lines (without the board's internals, timers and protocol traces unless `full`),
    /// then one `result` line per board, named as in `names`.
    public static func encode(
        _ trace: Trace, names: [String], header: TraceHeader? = nil,
        results: [(board: String, result: TraceResult)] = [], full: Bool = true
    ) throws -> Data {
        var out = Data()
        func line(_ l: Line) throws {
            out += try JSONText.lineData(l)
            out += Data("\n".utf8)
        }
        if let header {
            try line(
                Line(
                    t: 0, board: -1, name: "-", kind: "meta",
                    text: try JSONText.line(header)))
        }
        for e in trace.entries where full || keepsCompact(kind: e.kind.rawValue, text: e.text) {
            let name = names.indices.contains(e.board) ? names[e.board] : (e.board < 0 ? "-" : "board-\(e.board)")
            try line(Line(t: e.t, board: e.board, name: name, kind: e.kind.rawValue, text: e.text))
        }
        let end = trace.entries.last?.t ?? 0
        for (name, result) in results {
            let board = names.firstIndex(of: name) ?? -1
            let text = try JSONText.line(result)
            try line(Line(t: end, board: board, name: name, kind: "result", text: text))
        }
        return out
    }

    /// The lines of the trace file at `path`.
    public static func read(_ path: String) throws(TraceFileError) -> [Line] {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw .cannotRead(
                path: path, reason: FoundationErrorText.describe(error))
        }
        let decoder = JSONDecoder()
        var lines: [Line] = []
        for (n, text) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .enumerated()
        where !text.trimmingCharacters(in: .whitespaces).isEmpty {
            do { lines.append(try decoder.decode(Line.self, from: Data(text.utf8))) } catch {
                throw .notATraceLine(path: path, line: n + 1)
            }
        }
        return lines
    }

    /// The lines a compact trace keeps: it leaves out what the board did inside, timers,
    /// protocol traces and progress. What remains (writes, the flow's inputs, connections,
    /// faults, resets, decisions, notes, retries) is what a replay and a bug report need.
    public static func keepsCompact(kind: String, text: String) -> Bool {
        switch kind {
        case TraceKind.timer.rawValue, TraceKind.received.rawValue, TraceKind.device.rawValue,
            TraceKind.notification.rawValue:
            return false
        case TraceKind.report.rawValue:
            return !(text.hasPrefix("trace: ") || text.hasPrefix("progress: ") || text.hasPrefix("checkpoint: "))
        default:
            return true
        }
    }
}

/// Why a trace file could not be read or written.
public enum TraceFileError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotRead(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    /// Line `line` (from 1) is not a trace line.
    case notATraceLine(path: String, line: Int)

    public var description: String {
        switch self {
        case let .cannotRead(path, reason): return "\(path): cannot read the file: \(reason)"
        case let .cannotWrite(path, reason): return "\(path): cannot write the trace: \(reason)"
        case let .notATraceLine(path, line): return "\(path):\(line): not a bitflash trace line"
        }
    }
}

extension TraceFileError: DomainError {
    public var failureKind: FailureKind {
        switch self {
        case .cannotRead: return .unreadable
        case .cannotWrite: return .unwritable
        case .notATraceLine: return .malformedData
        }
    }
}
