import Foundation
import Flashing
import Transport

/// Live progress bars, one line per board, redrawn in place:
/// `microbit-v2  [██████████░░░░░░]  62%  3.2 KB/5.2 KB  1.9 KB/s  ETA 1.1 s  partial`
final class TerminalOutput: FlashOutput {
    private struct Line {
        var phase = "connecting"
        var done = 0
        var total = 0
        var unit = ProgressUnit.bytes
        var elapsed: Duration = .zero
        var phaseStart: Duration = .zero
        var final: String?
    }

    private let boards: [String]
    private let verbosity: Int
    private var lines: [String: Line] = [:]
    private var drawn = 0
    private var lastDraw: [String: String] = [:]

    init(boards: [String], verbosity: Int) {
        self.boards = boards
        self.verbosity = verbosity
        for b in boards { lines[b] = Line() }
    }

    func event(_ e: FlashEvent) {
        var l = lines[e.board] ?? Line()
        l.elapsed = e.elapsed
        switch e.report {
        case .phase(let p): l.phase = p.rawValue; l.phaseStart = e.elapsed; l.done = 0; l.total = 0
        case let .progress(done, total, unit): l.done = done; l.total = total; l.unit = unit
        case .retry(let m): printAbove("\(e.board): retry: \(m)")
        case .note(let m): printAbove("\(e.board): \(m)")
        case .trace(let m): if verbosity > 0 { printAbove("\(e.board): \(m)") }
        }
        lines[e.board] = l
        redraw()
    }

    func result(_ r: FlashResult) {
        lines[r.board, default: Line()].final = (r.error == nil ? "✔ " : "✘ ") + Figures.summary(r)
        redraw(force: true)
    }

    func finish(_ results: [FlashResult]) {
        if results.count > 1 { StdOut.write(SummaryTable.render(results)) }
    }

    private func render(_ board: String, _ l: Line) -> String {
        let name = board.padding(toLength: max(12, boards.map(\.count).max() ?? 0), withPad: " ", startingAt: 0)
        if let final = l.final { return "\(name)  \(final)" }
        guard l.total > 0 else { return "\(name)  \(l.phase)…" }
        let width = 24
        let filled = min(width, l.done * width / l.total)
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let percent = l.done * 100 / l.total
        let phaseTime = (l.elapsed - l.phaseStart).seconds
        let amount = l.unit == .bytes ? "\(Figures.bytes(l.done))/\(Figures.bytes(l.total))" : "\(l.done)/\(l.total) \(l.unit.rawValue)"
        var text = "\(name)  [\(bar)] \(String(format: "%3d", percent))%  \(amount)"
        if l.unit == .bytes, phaseTime > 0, l.done > 0 {
            text += "  " + Figures.rate(bytes: l.done, seconds: phaseTime)
            let eta = phaseTime * Double(l.total - l.done) / Double(l.done)
            text += "  ETA " + Figures.seconds(eta)
        }
        return text + "  \(l.phase)"
    }

    private func redraw(force: Bool = false) {
        var changed = force
        var rendered: [String] = []
        for b in boards {
            let text = render(b, lines[b] ?? Line())
            if lastDraw[b] != text { changed = true; lastDraw[b] = text }
            rendered.append(text)
        }
        guard changed else { return }
        var out = drawn > 0 ? "\u{1B}[\(drawn)F" : ""
        for text in rendered { out += "\u{1B}[2K" + text + "\n" }
        drawn = rendered.count
        StdOut.write(out)
    }

    /// Prints a message line above the bars and redraws them below it.
    private func printAbove(_ text: String) {
        var out = drawn > 0 ? "\u{1B}[\(drawn)F" : ""
        out += "\u{1B}[2K" + text + "\n"
        StdOut.write(out)
        drawn = 0
        lastDraw.removeAll()
        redraw(force: true)
    }
}
