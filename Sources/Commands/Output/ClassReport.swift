import Diagnostics
import Flasher
import Flashing
import Foundation

/// Who a board is, beyond the name it was flashed under: its advertised name and address.
struct BoardIdentity: Codable, Sendable, Equatable {
    var name: String?
    var address: String?
    /// The adapter the board was flashed through (`hci1`), when there was a choice of one.
    var adapter: String?
}

/// The closing report of a class set (more than one board): a row per board with its name,
/// address, result, path and time, and for each failure the one thing to do about it. Printed
/// as a table, given in JSON as the last line of `--json` (`{"type":"summary", ...}`), and kept
/// as the record `--retry-failed` reads (`ClassRunRecord`).
struct ClassReport: Codable, Sendable, Equatable {
    /// A board's row: what the record `--retry-failed` reads keeps (`ClassRunRecord`).
    typealias Row = ClassRunRecord.Row

    var type = "summary"
    var boards: [Row]
    /// Boards written (`ok` and `unverified`), failed, and written but not read back.
    var flashed: Int
    var failed: Int
    var unverified: Int

    init(_ results: [FlashResult], identities: [String: BoardIdentity]) {
        boards = results.map { r in
            let id = identities[r.board]
            let result = r.error != nil ? "failed" : r.verification == .unverified ? "unverified" : "ok"
            return Row(
                board: r.board, name: id?.name, address: id?.address, adapter: id?.adapter, result: result,
                path: r.path, fallback: r.fallback, seconds: (r.seconds * 1000).rounded() / 1000, verified: r.verified,
                exitCode: ExitStatus(r).rawValue, error: r.error ?? (result == "unverified" ? r.verificationNote : nil),
                fix: result == "ok"
                    ? nil
                    : result == "unverified"
                        ? Self.readBack
                        : Self.fix(r, board: id?.address ?? r.board))
        }
        failed = boards.filter { $0.result == "failed" }.count
        unverified = boards.filter { $0.result == "unverified" }.count
        flashed = boards.count - failed
    }

    /// The fix for a board written but not read back running the program.
    static let readBack =
        "flash it again with --retry-failed: the board is then read back (up to date when the write took)"

    /// How the result of a board stopped by `--sim-kill-at` begins (`FlashCommand.killed`).
    static let stoppedBySimKill = "bitflash was stopped at "

    /// The one-line fix for a failed board: for one that `--sim-kill-at` stopped, what stopped it
    /// (neither the board nor the radio failed), else the fix for its exit status.
    static func fix(_ result: FlashResult, board: String) -> String {
        if result.error?.hasPrefix(stoppedBySimKill) == true, result.error?.contains("--sim-kill-at") == true {
            return
                "stopped by --sim-kill-at: run the same command again, or with --retry-failed, to continue where it stopped"
        }
        return fix(ExitStatus(result), board: board)
    }

    /// The one-line fix for a board that failed with `status`.
    static func fix(_ status: ExitStatus, board: String) -> String {
        switch status {
        case .boardNotFound:
            return
                "switch the board on and into pairing mode (hold A+B, press reset), bring it near, then --retry-failed"
        case .bluetoothUnavailable:
            return "switch Bluetooth on (`bluetoothctl power on`), check that bluetoothd runs, then --retry-failed"
        case .servicesNotResolved:
            return "run `bitflash forget \(board)`, reset the board, then --retry-failed"
        case .pairingRefused:
            return
                "run `bitflash forget \(board)`, reset it into pairing mode (hold A+B, press reset), then --retry-failed"
        case .badFirmware:
            return "this file cannot go on this board (see its error): flash a file made for it"
        default:
            return
                "bring the board nearer the adapter and --retry-failed (an unfinished partial flash continues where it stopped)"
        }
    }

    /// The table: `board  name  address  [adapter]  result  path  time  verified  fix`, then the count
    /// (the adapter column when a board says which adapter it used).
    func table() -> String {
        let adapters = boards.contains { $0.adapter != nil }
        let header =
            ["board", "name", "address"] + (adapters ? ["adapter"] : [])
            + ["result", "path", "time", "verified", "fix"]
        let rows = boards.map { r in
            [r.board, r.name ?? "-", r.address ?? "-"] + (adapters ? [r.adapter ?? "-"] : []) + [
                r.result == "failed" ? "FAILED" : r.result,
                (r.path?.rawValue ?? "-") + (r.fallback ? " (fallback)" : ""), Figures.seconds(r.seconds),
                r.verified ? "yes" : "no", r.fix ?? ""
            ]
        }
        let widths = header.indices.map { i in ([header[i]] + rows.map { $0[i] }).map(\.count).max() ?? 0 }
        func fmt(_ cells: [String]) -> String {
            let line = zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(
                separator: "  ")
            return String(line.reversed().drop { $0 == " " }.reversed()) + "\n"
        }
        var out = fmt(header) + fmt(widths.map { String(repeating: "-", count: $0) })
        for row in rows { out += fmt(row) }
        out +=
            "\(flashed) of \(boards.count) boards flashed" + (failed > 0 ? ", \(failed) failed" : "")
            + (unverified > 0 ? ", \(unverified) not read back" : "")
            + (failed + unverified > 0 ? ": run the same command with --retry-failed to flash only those" : "") + "\n"
        return out
    }
}
