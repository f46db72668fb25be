import Foundation
import SystemFiles

/// The width of the terminal on standard output, in columns: what the terminal says
/// (`TerminalSize`, `ioctl(TIOCGWINSZ)`), else `COLUMNS`, else 80. Read again at every redraw,
/// and at once when the window is resized (SIGWINCH: `TerminalSize.watchResizes`).
enum TerminalWidth {
    static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        if let columns = TerminalSize.columns(of: STDOUT_FILENO) { return columns }
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        return 80
    }

    /// The height of the terminal on standard output, in rows: what the terminal says, else
    /// `LINES`, else nil (unknown: nothing is left out for want of rows).
    static func height(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int? {
        if let rows = TerminalSize.rows(of: STDOUT_FILENO) { return rows }
        if let text = environment["LINES"], let rows = Int(text), rows > 0 { return rows }
        return nil
    }

    /// The rows `lines` take on a terminal `columns` wide that rewraps its lines when resized
    /// (VTE, kitty, tmux and most others do): a line drawn at an earlier, wider width now spans
    /// as many rows as it needs at this one.
    static func rows(of lines: [String], columns: Int) -> Int {
        lines.reduce(0) { $0 + max(1, ($1.count + max(1, columns) - 1) / max(1, columns)) }
    }

    /// `text` cut to `columns - 1` characters (a line that fills the last column makes some
    /// terminals wrap), ending with `…` when cut. The bars and marks bitflash draws are one column each.
    static func fit(_ text: String, columns: Int) -> String {
        let limit = max(columns - 1, 8)
        guard text.count > limit else { return text }
        return String(text.prefix(limit - 1)) + "…"
    }
}
