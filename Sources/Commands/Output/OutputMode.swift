import Diagnostics
import Foundation
import Flashing
import Synchronization

/// How bitflash talks to the user: a live terminal, a pipe, or a script reading JSON.
enum OutputMode: Equatable {
    /// Progress bars redrawn in place, colours off unless supported.
    case terminal
    /// Plain, timestamped lines: one per phase change, retry and result.
    case plain
    /// One JSON object per line: events, then a result per board.
    case json

    /// JSON when asked, plain lines when asked (`--plain`), else bars on a terminal.
    static func choose(json: Bool, plain: Bool = false) -> OutputMode {
        if json { return .json }
        if plain { return .plain }
        let env = ProcessInfo.processInfo.environment
        if env["BITFLASH_FORCE_TTY"] == "1" { return .terminal }
        return isatty(STDOUT_FILENO) == 1 && env["TERM"] != "dumb" ? .terminal : .plain
    }
}

/// Receives the events and results of one or more flashes and shows them.
protocol FlashOutput: AnyObject {
    func event(_ event: FlashEvent)
    func result(_ result: FlashResult)
    /// Called once at the end, with every board's result and, where known, each board's name
    /// and address (by the name it was flashed under): several boards close with the class report.
    func finish(_ results: [FlashResult], identities: [String: BoardIdentity])
    /// Called once before several boards are flashed, with the class's estimate.
    func classEstimate(_ preview: ClassPreview)
    /// The terminal's window was resized (SIGWINCH).
    func resized()
    /// Who the boards are (name and address, by the name each is flashed under), as soon as it
    /// is known: the class grid shows it while the boards are flashed.
    func identify(_ identities: [String: BoardIdentity])
}

extension FlashOutput {
    func finish(_ results: [FlashResult]) { finish(results, identities: [:]) }
    func classEstimate(_ preview: ClassPreview) {}
    func resized() {}
    func identify(_ identities: [String: BoardIdentity]) {}
}

/// Shows nothing: a dry run over BlueZ prints its plans instead of progress.
final class SilentOutput: FlashOutput {
    func event(_ event: FlashEvent) {}
    func result(_ result: FlashResult) {}
    func finish(_ results: [FlashResult], identities: [String: BoardIdentity]) {}
}

enum Output {
    static func make(_ mode: OutputMode, boards: [String], verbosity: Int) -> FlashOutput {
        switch mode {
        // Several boards: the class grid, a line per board.
        case .terminal:
            return boards.count > 1
                ? GridOutput(boards: boards) as FlashOutput : TerminalOutput(boards: boards, verbosity: verbosity)
        case .plain: return PlainOutput(verbosity: verbosity)
        case .json: return JSONLinesOutput()
        }
    }
}

/// Writes to standard output without buffering surprises. Standard output closed (`>&-`), or
/// its reader gone (`| head -1`): the write fails, a warning says so once on standard error,
/// and the run goes on, so that a flash under way is finished, never stopped by its output.
enum StdOut {
    private static let failed = Mutex(false)

    static func write(_ text: String) {
        do { try FileHandle.standardOutput.write(contentsOf: Data(text.utf8)) } catch {
            guard
                !failed.withLock({ was in
                    defer { was = true }; return was
                })
            else { return }
            StdErr.write(
                "bitflash: warning: standard output cannot be written (\(FoundationErrorText.describe(error))): "
                    + "the rest of this run's output is lost; the run goes on and its exit status says how it ended\n")
        }
    }
}

/// Writes to standard error; a closed standard error loses the text, never the run.
enum StdErr {
    static func write(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }
}

/// Human figures: `5,152 bytes`, `1.9 KB/s`, `2.9 s`.
enum Figures {
    static func bytes(_ n: Int) -> String {
        if n < 10_000 { return grouped(n) + " B" }
        return String(format: "%.1f KB", Double(n) / 1000)
    }

    static func grouped(_ n: Int) -> String {
        let s = String(n)
        var out = ""
        for (i, c) in s.enumerated() {
            if i > 0, (s.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }

    static func seconds(_ s: Double) -> String {
        s < 10 ? String(format: "%.2f s", s) : String(format: "%.1f s", s)
    }

    static func rate(bytes: Int, seconds: Double) -> String {
        guard seconds > 0 else { return "-" }
        return String(format: "%.1f KB/s", Double(bytes) / seconds / 1000)
    }

    /// The one-line summary of a result: `partial: runtime matches, 5,152 bytes in 82 blocks, 2.9 s`.
    /// - Parameter decided: the reason codes a decision line already gave for this board; the
    ///   reason is left out when it is one of them, so that a log says it once.
    static func summary(_ r: FlashResult, decided: Set<String> = []) -> String {
        if let error = r.error { return "failed: \(error)" }
        let path = (r.path?.rawValue ?? "?") + (r.fallback ? " (after fallback)" : "")
        var parts = [decided.contains(r.reason.code) ? path : "\(path): \(r.reason.message)"]
        if r.bytesSent > 0 { parts.append("\(grouped(r.bytesSent)) bytes") }
        parts.append(seconds(r.seconds))
        if r.retries > 0 { parts.append("\(r.retries) retr\(r.retries == 1 ? "y" : "ies")") }
        switch r.verification {
        case .verified: parts.append("verified")
        case .unverified: parts.append("NOT VERIFIED: \(r.verificationNote ?? "the board was not read back")")
        case .failed, .dryRun: break
        }
        return parts.joined(separator: ", ")
    }
}
