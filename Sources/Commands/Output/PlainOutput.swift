import Foundation
import Flashing
import Transport

/// Plain, timestamped lines, for pipes and logs.
final class PlainOutput: FlashOutput {
    private let verbosity: Int
    private var lastPercent: [String: Int] = [:]
    /// The reason codes each board's decision lines gave.
    private var decided: [String: Set<String>] = [:]

    init(verbosity: Int) { self.verbosity = verbosity }

    private func line(_ board: String, _ elapsed: Duration, _ text: String) {
        StdOut.write(String(format: "[%8.3f s] ", elapsed.seconds) + "\(board): \(text)\n")
    }

    func event(_ e: FlashEvent) {
        switch e.report.worded {
        case .phase(let phase): line(e.board, e.elapsed, phase.rawValue)
        case let .progress(done, total, unit):
            // One line per 10 % so that a log stays readable.
            guard total > 0 else { return }
            let percent = done * 100 / total
            let step = percent / 10 * 10
            if step != lastPercent[e.board] || done == total {
                lastPercent[e.board] = step
                // With the rate measured on the link so far and the phase's time left at it.
                let rate = e.rate.map {
                    String(format: ", %.1f %@/s, ", $0.perSecond, unit.rawValue) + Figures.seconds($0.remaining.seconds)
                        + " left"
                }
                line(e.board, e.elapsed, "\(percent)% (\(done)/\(total) \(unit.rawValue))" + (rate ?? ""))
            }
        case .retry(let text): line(e.board, e.elapsed, "retry: \(text)")
        case .note(let text): line(e.board, e.elapsed, text)
        case .trace(let text): if verbosity > 0 { Verbose.log.debug("\(e.board): \(text)") }
        case let .decision(code, text):
            decided[e.board, default: []].insert(code)
            line(e.board, e.elapsed, "decision: \(text) [\(code)]")
        case .checkpoint, .flow: break  // `worded` has made every typed report a retry, note or trace
        }
    }

    func classEstimate(_ preview: ClassPreview) { StdOut.write(preview.line + "\n") }

    func result(_ r: FlashResult) {
        line(
            r.board, .microseconds(Int64((r.seconds * 1_000_000).rounded())),
            Figures.summary(r, decided: decided[r.board] ?? []))
    }

    func finish(_ results: [FlashResult], identities: [String: BoardIdentity]) {
        guard results.count > 1 else { return }
        StdOut.write(ClassReport(results, identities: identities).table())
    }
}

/// The summary table printed after flashing several boards.
enum SummaryTable {
    /// - Parameter labels: a first column naming each row (the demo's steps), when given.
    static func render(_ results: [FlashResult], labels: [String]? = nil) -> String {
        var header = ["board", "result", "path", "fallback", "bytes", "time", "verified"]
        var rows = results.map { r in
            [
                r.board, r.error != nil ? "FAILED" : r.verification == .unverified ? "unverified" : "ok",
                r.path?.rawValue ?? "-",
                r.fallback ? "yes" : "no", Figures.grouped(r.bytesSent), Figures.seconds(r.seconds),
                r.verified ? "yes" : "no"
            ]
        }
        if let labels, labels.count == rows.count {
            header.insert("step", at: 0)
            rows = zip(labels, rows).map { [$0] + $1 }
        }
        let widths = header.indices.map { i in ([header[i]] + rows.map { $0[i] }).map(\.count).max() ?? 0 }
        func fmt(_ cells: [String]) -> String {
            let line = zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(
                separator: "  ")
            return String(line.reversed().drop { $0 == " " }.reversed()) + "\n"
        }
        var out = fmt(header)
        out += fmt(widths.map { String(repeating: "-", count: $0) })
        for row in rows { out += fmt(row) }
        let failed = results.filter { $0.error != nil }.count
        let unverified = results.filter { $0.error == nil && $0.verification == .unverified }.count
        out +=
            "\(results.count - failed) of \(results.count) boards flashed\(failed > 0 ? ", \(failed) failed" : "")"
            + (unverified > 0 ? ", \(unverified) not read back" : "") + "\n"
        return out
    }
}
