import Flashing
import Transport

/// The grid's lines at a width: a header, then a line per board. No line is `columns` wide or
/// wider (the last column makes some terminals wrap): narrower terminals drop the boards'
/// advertised names, their addresses, the rate and the time left, and narrow the bar, before
/// anything is cut; a failure's reason is cut last, ending with `…`.
///
///     8 boards: 5 done, 0 failed, 2 flashing, 1 waiting; class ETA 9.80 s
///     sim-1  F0:0D:00:00:00:01  McuMgr      ✔ verified, 21.0 s
///     sim-7  F0:0D:00:00:00:07  McuMgr      [███████████░░░░░░░░░]  57%  31.2 KB/s  ETA 9.80 s
///     sim-8  F0:0D:00:00:00:08  -           waiting
extension ClassGrid {
    /// Which columns a width leaves room for.
    struct Layout: Equatable {
        var name: Bool
        var address: Bool
        var bar: Int
        var rate: Bool
        var eta: Bool

        static let all: [Layout] = [
            Layout(name: true, address: true, bar: 20, rate: true, eta: true),
            Layout(name: false, address: true, bar: 20, rate: true, eta: true),
            Layout(name: false, address: true, bar: 12, rate: false, eta: true),
            Layout(name: false, address: false, bar: 16, rate: true, eta: true),
            Layout(name: false, address: false, bar: 12, rate: false, eta: true),
            Layout(name: false, address: false, bar: 8, rate: false, eta: false)
        ]
    }

    /// The lines to draw at `columns`, each SGR-coloured (green verified, red failed, yellow not
    /// read back, a bold header) when `color`; the colour codes take no column.
    ///
    /// A grid taller than the terminal's `rows` cannot be redrawn in place (the cursor cannot
    /// go back up into the scrollback): it then keeps the boards that most need an eye (failed,
    /// under way, not read back, waiting, then done), in their order, and a last line counts the
    /// others, so that the grid takes at most `rows - 1` rows.
    func lines(columns: Int, rows: Int? = nil, color: Bool = false) -> [String] {
        let layout = layout(columns: columns)
        var out = [paint(TerminalWidth.fit(header(columns: columns), columns: columns), "1", color)]
        let room = rows.map { max(3, $0 - 1) } ?? Int.max
        let shown = boards.count + 1 <= room ? boards : shownBoards(room - 2)
        for b in shown {
            let text = TerminalWidth.fit(line(b, layout), columns: columns)
            switch b.outcome {
            case .verified?: out.append(paint(text, "32", color))
            case .failed?: out.append(paint(text, "31", color))
            case .unverified?: out.append(paint(text, "33", color))
            case nil: out.append(text)
            }
        }
        if shown.count < boards.count {
            let hidden = ClassGrid(boards: boards.filter { b in !shown.contains { $0.key == b.key } }, now: now)
            let c = hidden.counts
            let parts = [(c.done, "done"), (c.failed, "failed"), (c.flashing, "flashing"), (c.waiting, "waiting")]
                .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
            let text = "… \(hidden.boards.count) more: " + parts.joined(separator: ", ")
            out.append(TerminalWidth.fit(text, columns: columns))
        }
        return out
    }

    /// The `count` boards that most need an eye, in the class's order.
    private func shownBoards(_ count: Int) -> [Board] {
        func rank(_ b: Board) -> Int {
            switch b.outcome {
            case .failed?: return 0
            case .unverified?: return 2
            case .verified?: return 4
            case nil: return b.phase == .done ? 4 : b.waiting ? 3 : 1
            }
        }
        let chosen = boards.indices.sorted { (rank(boards[$0]), $0) < (rank(boards[$1]), $1) }.prefix(count)
        return chosen.sorted().map { boards[$0] }
    }

    private func paint(_ text: String, _ code: String, _ color: Bool) -> String {
        color ? "\u{1B}[\(code)m" + text + "\u{1B}[0m" : text
    }

    /// The header at `columns`: the widest that fits; a narrow one leaves out the boards under
    /// way (the others' counts add up to them).
    func header(columns: Int) -> String {
        let wide = header(wide: true)
        return wide.count < columns ? wide : header(wide: false)
    }

    /// The header: the counts, then the class's time left (or, once every board ended, the
    /// class's time).
    func header(wide: Bool) -> String {
        let c = counts
        var parts = ["\(c.done) done", "\(c.failed) failed"]
        if wide { parts.append("\(c.flashing) flashing") }
        parts.append("\(c.waiting) waiting")
        let head = "\(boards.count) boards: " + parts.joined(separator: ", ")
        if c.flashing + c.waiting == 0 {
            let last = boards.compactMap(\.seconds).max()
            return head + (last.map { "; ended in " + Figures.seconds($0) } ?? "")
        }
        guard let left = classRemaining else { return head }
        return head + (wide ? "; class ETA " : "; ETA ") + Figures.seconds(left.seconds)
    }

    /// The widest layout whose fixed columns fit (the figures at their widest).
    func layout(columns: Int) -> Layout {
        let fixed = 2 * 2 + widths.key + widths.path
        return Layout.all.first { l in
            let identity = (l.name ? widths.name + 2 : 0) + (l.address ? widths.address + 2 : 0)
            let status = l.bar + 2 + 5 + (l.rate ? 12 : 0) + (l.eta ? 13 : 0)
            return fixed + identity + status < columns
        } ?? Layout.all[Layout.all.count - 1]
    }

    /// The widths of the identity columns: a name or address column is left out (width 0) when
    /// it would only repeat the name each board is flashed under, or nothing is known of it yet
    /// (a real board's comes with its result).
    private var widths: (key: Int, name: Int, address: Int, path: Int) {
        let names = boards.map { $0.name != $0.key ? ($0.name ?? "") : "" }
        let addresses = boards.map { $0.address != $0.key ? ($0.address ?? "") : "" }
        return (
            boards.map(\.key.count).max() ?? 0,
            names.allSatisfy(\.isEmpty) ? 0 : names.map(\.count).max() ?? 0,
            addresses.allSatisfy(\.isEmpty) ? 0 : addresses.map(\.count).max() ?? 0,
            10
        )
    }

    private func line(_ b: Board, _ layout: Layout) -> String {
        let w = widths
        func pad(_ s: String, _ n: Int) -> String { s.padding(toLength: n, withPad: " ", startingAt: 0) }
        var cells = [pad(b.key, w.key)]
        if layout.name, w.name > 0 { cells.append(pad(b.name != b.key ? (b.name ?? "") : "", w.name)) }
        if layout.address, w.address > 0 { cells.append(pad(b.address != b.key ? (b.address ?? "") : "", w.address)) }
        cells.append(pad(b.path?.rawValue ?? "-", w.path))
        cells.append(status(b, layout))
        return cells.joined(separator: "  ")
    }

    /// What the board is doing, or how it ended.
    private func status(_ b: Board, _ layout: Layout) -> String {
        let time = b.seconds.map { ", " + Figures.seconds($0) } ?? ""
        switch b.outcome {
        case .verified?: return "✔ " + (b.path == .upToDate ? "up to date, verified" : "verified") + time
        case .unverified(let why)?: return "? written, NOT read back\(time): \(why)"
        case .failed(let why)?: return "✘ failed: \(why)"
        case nil: break
        }
        guard let phase = b.phase else { return "waiting" }
        // Done, its result (read back or not) to follow: a simulated class gives the results at its end.
        if phase == .done { return "✔ done at " + Figures.seconds(b.seen.seconds) }
        guard b.total > 0 else { return phase.rawValue + "…" }
        let percent = min(100, b.done * 100 / b.total)
        let filled = min(layout.bar, b.done * layout.bar / b.total)
        var text =
            "[" + String(repeating: "█", count: filled) + String(repeating: "░", count: layout.bar - filled) + "] "
            + pad3(percent) + "%"
        // Partial flashing counts 64-byte blocks: the rate is in bytes all the same.
        if layout.rate, let rate = b.rate, rate.perSecond > 0 {
            let bytes = Int(rate.perSecond * Double(b.unit == .bytes ? 1 : 64))
            text += "  " + Figures.rate(bytes: bytes, seconds: 1)
        }
        if layout.eta, let left = remaining(b) { text += "  ETA " + Figures.seconds(left.seconds) }
        return text
    }

    private func pad3(_ n: Int) -> String { String(repeating: " ", count: max(0, 3 - String(n).count)) + String(n) }
}
