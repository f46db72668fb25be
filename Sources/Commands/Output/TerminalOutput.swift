import Foundation
import Flashing
import Transport

/// Live progress bars, one line per board, redrawn in place and never wider than the terminal
/// (`TerminalWidth`, read at every redraw):
/// `microbit-v2  [██████████░░░░░░]  62%  3.2 KB/5.2 KB  1.9 KB/s  ETA 1.1 s  partial`
final class TerminalOutput: FlashOutput {
    private struct Line {
        var phase = "connecting"
        var done = 0
        var total = 0
        var unit = ProgressUnit.bytes
        var elapsed: Duration = .zero
        var phaseStart: Duration = .zero
        /// The rate measured on the link over the last seconds (nil until there is enough progress).
        var rate: ProgressRate?
        var final: String?
    }

    private let boards: [String]
    private let verbosity: Int
    private var lines: [String: Line] = [:]
    private var drawn = 0
    private var lastDraw: [String: String] = [:]
    private var lastPercent: [String: Int] = [:]
    /// The reason codes each board's decision lines gave.
    private var decided: [String: Set<String>] = [:]
    private var lastDrawTime: Duration = .zero
    private var cursorHidden = false
    /// The bars as last drawn, in order, and the width they were drawn at.
    private var drawnLines: [String] = []
    private var drawnColumns = 0

    init(boards: [String], verbosity: Int) {
        self.boards = boards
        self.verbosity = verbosity
        for b in boards { lines[b] = Line() }
    }

    func event(_ e: FlashEvent) {
        var l = lines[e.board] ?? Line()
        l.elapsed = e.elapsed
        var force = false
        switch e.report.worded {
        case .phase(let p):
            l.phase = p.rawValue; l.phaseStart = e.elapsed; l.done = 0; l.total = 0; l.rate = nil; force = true
        case let .progress(done, total, unit): l.done = done; l.total = total; l.unit = unit; l.rate = e.rate
        case .retry(let m): lines[e.board] = l; printAbove("\(e.board): retry: \(m)"); return
        case .note(let m): lines[e.board] = l; printAbove("\(e.board): \(m)"); return
        case .trace(let m): if verbosity > 0 { Verbose.log.debug("\(e.board): \(m)") }; return
        case let .decision(code, m):
            lines[e.board] = l
            decided[e.board, default: []].insert(code)
            printAbove("\(e.board): decision: \(m) [\(code)]")
            return
        case .checkpoint, .flow: return  // `worded` has made every typed report a retry, note or trace
        }
        lines[e.board] = l
        // Redraw when the whole percent changes, the phase changes, or a tenth of a second passed:
        // enough for a live bar, without a screenful of escape codes per block.
        let percent = l.total > 0 ? l.done * 100 / l.total : -1
        if force || percent != lastPercent[e.board] || (e.elapsed - lastDrawTime).seconds >= 0.1 || l.done == l.total {
            lastPercent[e.board] = percent
            lastDrawTime = e.elapsed
            redraw(force: force)
        }
    }

    func classEstimate(_ preview: ClassPreview) { printAbove(preview.line) }

    func result(_ r: FlashResult) {
        let mark = r.error != nil ? "✘ " : r.verification == .unverified ? "? " : "✔ "
        lines[r.board, default: Line()].final = mark + Figures.summary(r, decided: decided[r.board] ?? [])
        redraw(force: true)
    }

    func finish(_ results: [FlashResult], identities: [String: BoardIdentity]) {
        // Nothing is redrawn after this: the closing lines are written whole over the bars, and
        // may wrap.
        if drawn > 0, boards.allSatisfy({ lines[$0]?.final != nil }) {
            let name = max(12, boards.map(\.count).max() ?? 0)
            var out = upOverBars(columns: TerminalWidth.current())
            for b in boards {
                out += "\r" + b.padding(toLength: name, withPad: " ", startingAt: 0) + "  " + (lines[b]?.final ?? "")
                out += "\u{1B}[K\n"
            }
            StdOut.write(out)
            drawn = 0
        }
        if cursorHidden { StdOut.write("\u{1B}[?25h"); cursorHidden = false }
        if results.count > 1 { StdOut.write(ClassReport(results, identities: identities).table()) }
    }

    /// A board's line, at most `columns - 1` wide: the bar narrows and the rate and time left go
    /// before anything is cut, so that a redraw never wraps and leaves a row behind.
    private func render(_ board: String, _ l: Line, columns: Int) -> String {
        let name = board.padding(toLength: max(12, boards.map(\.count).max() ?? 0), withPad: " ", startingAt: 0)
        if let final = l.final { return TerminalWidth.fit("\(name)  \(final)", columns: columns) }
        guard l.total > 0 else { return TerminalWidth.fit("\(name)  \(l.phase)…", columns: columns) }
        let percent = l.done * 100 / l.total
        let phaseTime = (l.elapsed - l.phaseStart).seconds
        // Partial flashing counts 64-byte blocks: the bar shows their bytes too.
        let unitBytes = l.unit == .bytes ? 1 : 64
        let amount =
            l.unit == .bytes
            ? "\(Figures.bytes(l.done))/\(Figures.bytes(l.total))"
            : "\(l.done)/\(l.total) \(l.unit.rawValue) (\(Figures.bytes(l.done * unitBytes)))"
        // The rate measured on the link over the last seconds, and the time left at it; until
        // there is one, the average since the phase began.
        var pace = ""
        if let rate = l.rate, rate.perSecond > 0 {
            pace += "  " + Figures.rate(bytes: Int(rate.perSecond * Double(unitBytes)), seconds: 1)
            pace += "  ETA " + Figures.seconds(rate.remaining.seconds)
        } else if phaseTime > 0, l.done > 0 {
            pace += "  " + Figures.rate(bytes: l.done * unitBytes, seconds: phaseTime)
            let eta = phaseTime * Double(l.total - l.done) / Double(l.done)
            pace += "  ETA " + Figures.seconds(eta)
        }
        func line(bar width: Int, amount: String, pace: String) -> String {
            let filled = min(width, l.done * width / l.total)
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            return "\(name)  [\(bar)] \(String(format: "%3d", percent))%\(amount)\(pace)  \(l.phase)"
        }
        let candidates = [
            line(bar: 24, amount: "  " + amount, pace: pace), line(bar: 16, amount: "  " + amount, pace: pace),
            line(bar: 16, amount: "  " + amount, pace: ""), line(bar: 10, amount: "  " + amount, pace: ""),
            line(bar: 10, amount: "", pace: "")
        ]
        let fitting = candidates.first { $0.count < columns } ?? candidates[candidates.count - 1]
        return TerminalWidth.fit(fitting, columns: columns)
    }

    /// The window was resized (SIGWINCH): the bars are drawn again at once, at the new width.
    func resized() {
        guard drawn > 0 else { return }
        redraw(force: true)
    }

    /// Moves the cursor up to the first row of the bars drawn last. After a resize the terminal
    /// may have rewrapped them over more rows (`TerminalWidth.rows`): the move covers those, and
    /// what is below is cleared, so that no row of an old bar stays behind.
    private func upOverBars(columns: Int) -> String {
        guard drawn > 0 else { return "" }
        guard columns != drawnColumns else { return "\u{1B}[\(drawn)F" }
        return "\u{1B}[\(TerminalWidth.rows(of: drawnLines, columns: columns))F\u{1B}[J"
    }

    private func redraw(force: Bool = false) {
        let columns = TerminalWidth.current()
        var changed = force || (drawn > 0 && columns != drawnColumns)
        var rendered: [String] = []
        for b in boards {
            let text = render(b, lines[b] ?? Line(), columns: columns)
            if lastDraw[b] != text { changed = true; lastDraw[b] = text }
            rendered.append(text)
        }
        guard changed else { return }
        // Hide the cursor while bars are live; move up over the old bars and overwrite each
        // line, clearing only what is left of it, so that nothing flickers or stays behind.
        var out = cursorHidden ? "" : "\u{1B}[?25l"
        cursorHidden = true
        out += upOverBars(columns: columns)
        for text in rendered { out += "\r" + text + "\u{1B}[K\n" }
        drawn = rendered.count
        drawnLines = rendered
        drawnColumns = columns
        StdOut.write(out)
    }

    /// Prints a message line above the bars and redraws them below it.
    private func printAbove(_ text: String) {
        var out = upOverBars(columns: TerminalWidth.current())
        out += "\r" + text + "\u{1B}[K\n"
        StdOut.write(out)
        drawn = 0
        lastDraw.removeAll()
        redraw(force: true)
    }
}
