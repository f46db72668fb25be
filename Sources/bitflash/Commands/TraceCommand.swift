import ArgumentParser
import Flashing
import Foundation
import SimulatedBoard

/// `bitflash trace show FILE`: a trace written by `flash --trace FILE`, readable.
struct TraceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Look at traces recorded with `bitflash flash --trace FILE`.",
        subcommands: [TraceShowCommand.self])
}

struct TraceShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print a trace as aligned lines: time, board, kind, what happened.")

    @Argument(help: "The trace file (JSON lines).")
    var file: String

    @Option(help: ArgumentHelp("Only this board's lines.", valueName: "NAME"))
    var board: String?

    @Option(parsing: .upToNextOption, help: ArgumentHelp("Only these kinds (write, input, notify, report, connect, fault, meta, result, ...).", valueName: "KIND"))
    var kind: [String] = []

    func run() async throws {
        try await runCommand {
            let entries = try TraceFile.read(file)
            let shown = entries.filter { e in
                (board == nil || e.name == board) && (kind.isEmpty || kind.contains(e.kind))
            }
            let width = max(5, shown.map(\.name.count).max() ?? 0)
            var out = ""
            for e in shown {
                out += String(format: "%11.6f s  ", Double(e.t) / 1e6)
                out += e.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                out += e.kind.padding(toLength: 12, withPad: " ", startingAt: 0) + e.text + "\n"
            }
            let boards = Set(entries.filter { $0.board >= 0 }.map(\.name)).sorted()
            out += "\(shown.count) of \(entries.count) lines; boards: \(boards.joined(separator: ", "))"
            if let last = entries.last { out += String(format: "; last at %.3f s modelled", Double(last.t) / 1e6) }
            StdOut.write(out + "\n")
            return .ok
        }
    }
}

/// The trace file format: one JSON object per line, `{"t": µs, "board": index, "name": board name,
/// "kind": ..., "text": ...}`, in time order.
enum TraceFile {
    struct Line: Codable {
        var t: Int64
        var board: Int
        var name: String
        var kind: String
        var text: String
    }

    /// Writes `trace` as JSON lines: a `meta` line with `header` first (when given), then the
    /// run's lines (without the board's internals, timers and protocol traces unless `full`),
    /// then one `result` line per board (`TraceResult`).
    static func write(_ trace: Trace, names: [String], to path: String, header: TraceHeader? = nil,
                      results: [FlashResult] = [], full: Bool = true, inputs: [String] = []) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var out = Data()
        func line(_ l: Line) throws {
            out += try encoder.encode(l)
            out += Data("\n".utf8)
        }
        if let header {
            try line(Line(t: 0, board: -1, name: "-", kind: "meta", text: String(decoding: try encoder.encode(header), as: UTF8.self)))
        }
        for e in trace.entries where full || TraceFilter.keepsCompact(kind: e.kind.rawValue, text: e.text) {
            let name = names.indices.contains(e.board) ? names[e.board] : (e.board < 0 ? "-" : "board-\(e.board)")
            try line(Line(t: e.t, board: e.board, name: name, kind: e.kind.rawValue, text: e.text))
        }
        let end = trace.entries.last?.t ?? 0
        for r in results {
            let board = names.firstIndex(of: r.board) ?? -1
            let text = String(decoding: try encoder.encode(TraceResult(r)), as: UTF8.self)
            try line(Line(t: end, board: board, name: r.board, kind: "result", text: text))
        }
        try OutputFile.write([UInt8](out), to: path, what: "the trace", inputs: inputs)
    }

    static func read(_ path: String) throws -> [Line] {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CLIError(.cannotRead, "\(path): cannot read the file: \((error as NSError).localizedFailureReason ?? error.localizedDescription)")
        }
        let decoder = JSONDecoder()
        var lines: [Line] = []
        for (n, text) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !text.trimmingCharacters(in: .whitespaces).isEmpty {
            do { lines.append(try decoder.decode(Line.self, from: Data(text.utf8))) } catch {
                throw CLIError(.badFirmware, "\(path):\(n + 1): not a bitflash trace line; "
                                   + "record one with `bitflash flash FILE --simulate --trace \((path as NSString).lastPathComponent)`")
            }
        }
        return lines
    }
}
