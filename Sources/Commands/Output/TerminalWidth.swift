import Foundation

/// The width of the terminal on standard output, in columns: what the terminal says
/// (`ioctl(TIOCGWINSZ)`), else `COLUMNS`, else 80. Read again at every redraw, so that a resized
/// window (SIGWINCH, which the kernel sends when `ws_col` changes) is drawn at its new width from
/// the next redraw on. This is the one place bitflash asks the terminal anything.
enum TerminalWidth {
    static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        return 80
    }

    /// `text` cut to `columns - 1` characters (a line that fills the last column makes some
    /// terminals wrap), ending with `…` when cut. The bars and marks bitflash draws are one column each.
    static func fit(_ text: String, columns: Int) -> String {
        let limit = max(columns - 1, 8)
        guard text.count > limit else { return text }
        return String(text.prefix(limit - 1)) + "…"
    }
}
