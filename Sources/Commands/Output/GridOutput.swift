import Foundation
import Flashing
import Transport

/// The live class grid on a terminal: `ClassGrid`'s lines, redrawn in place as the boards'
/// events arrive, never wider than the terminal (read at every redraw, and at once on SIGWINCH).
/// At the end the last picture stays, and the class report and its `--retry-failed` hint follow
/// it, as after the plain lines; under `watch` the grid is wiped instead, and watch's own lines
/// say how the flash ended.
final class GridOutput: FlashOutput {
    /// What follows the last picture.
    enum Closing {
        /// The class report table, for several boards (`flash`).
        case report
        /// Nothing: the grid is wiped (`watch` prints its own lines).
        case wipe
    }

    private var grid: ClassGrid
    private let closing: Closing
    private let color: Bool
    /// The lines as last drawn, without colour, and the width they were drawn at.
    private var drawn: [String] = []
    private var drawnColumns = 0
    /// The class's clock at the last redraw.
    private var lastDraw: Duration?
    private var cursorHidden = false

    init(
        boards: [String], closing: Closing = .report,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        grid = ClassGrid(boards: boards)
        self.closing = closing
        color = Self.colors(environment)
    }

    /// Colours unless `NO_COLOR` is set to anything (no-color.org) or the terminal is `dumb`.
    static func colors(_ environment: [String: String]) -> Bool {
        (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }

    func event(_ e: FlashEvent) {
        let before = grid.boards.first { $0.key == e.board }?.phase
        grid.apply(e)
        // Redraw when a board changes phase, or a tenth of a second passed on the class's clock:
        // a live picture, without a screenful of escape codes per block.
        let phaseChanged = grid.boards.first { $0.key == e.board }?.phase != before
        guard phaseChanged || lastDraw.map({ (grid.now - $0).seconds >= 0.1 }) ?? true else { return }
        redraw()
    }

    func result(_ r: FlashResult) {
        grid.apply(r)
        redraw()
    }

    /// The estimate's line is printed once above the grid (not under `watch`, whose lines stay
    /// as they were); its figures feed the ETAs.
    func classEstimate(_ preview: ClassPreview) {
        grid.apply(preview)
        guard closing == .report else { return }
        var out = upOverGrid(columns: TerminalWidth.current())
        out += "\r" + preview.line + "\u{1B}[K\n"
        drawn = []
        StdOut.write(out)
        redraw()
    }

    func identify(_ identities: [String: BoardIdentity]) {
        grid.apply(identities)
        if !drawn.isEmpty { redraw() }
    }

    /// The window was resized (SIGWINCH): the grid is drawn again at once, at the new width.
    func resized() {
        guard !drawn.isEmpty else { return }
        redraw()
    }

    func finish(_ results: [FlashResult], identities: [String: BoardIdentity]) {
        grid.apply(identities)
        switch closing {
        case .report:
            redraw()
            var out = cursorHidden ? "\u{1B}[?25h" : ""
            if results.count > 1 { out += ClassReport(results, identities: identities).table() }
            StdOut.write(out)
        case .wipe:
            StdOut.write(
                upOverGrid(columns: TerminalWidth.current()) + "\u{1B}[J" + (cursorHidden ? "\u{1B}[?25h" : ""))
        }
        cursorHidden = false
        drawn = []
    }

    /// Moves the cursor up to the first row of the grid drawn last. After a resize the terminal
    /// may have rewrapped its lines over more rows (`TerminalWidth.rows`): the move covers those,
    /// and what is below is cleared, so that no row of an old line stays behind.
    private func upOverGrid(columns: Int) -> String {
        guard !drawn.isEmpty else { return "" }
        guard columns != drawnColumns else { return "\u{1B}[\(drawn.count)F" }
        return "\u{1B}[\(TerminalWidth.rows(of: drawn, columns: columns))F\u{1B}[J"
    }

    private func redraw() {
        let columns = TerminalWidth.current()
        let rows = TerminalWidth.height()
        let plain = grid.lines(columns: columns, rows: rows)
        guard plain != drawn || columns != drawnColumns else { return }
        // Hide the cursor while the grid is live; move up over the old grid and overwrite each
        // line, clearing only what is left of it, so that nothing flickers or stays behind.
        var out = cursorHidden ? "" : "\u{1B}[?25l"
        cursorHidden = true
        out += upOverGrid(columns: columns)
        for text in color ? grid.lines(columns: columns, rows: rows, color: true) : plain {
            out += "\r" + text + "\u{1B}[K\n"
        }
        drawn = plain
        drawnColumns = columns
        lastDraw = grid.now
        StdOut.write(out)
    }
}
