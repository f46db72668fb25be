import Diagnostics
import Flashing
import Foundation

/// What `bitflash watch` prints: one line per flashed board, stamped with the time of day, or
/// with `--json` one object per line:
/// `{"type":"watching","paths":[...]}` at the start;
/// `{"type":"flashing","file","time"}` when a flash starts (JSON only: the text has one line per flash);
/// `{"type":"flash","file","time","results":[FlashResult...]}` after each flash;
/// `{"type":"passed-over","file","newer","time"}` for an older file superseded by a newer one;
/// `{"type":"incomplete","file","message","time"}` for a file that stayed unparsable;
/// `{"type":"error","file","message","exitCode","time"}` for a file that could not be flashed at all.
/// With `-v`, what the watch waits for, on standard error (with or without `--json`): each change it
/// sees, with the file's size, and each settled file that is not complete firmware yet.
final class WatchReport: Sendable {
    let json: Bool
    let verbose: Bool
    init(json: Bool, verbose: Bool = false) {
        self.json = json
        self.verbose = verbose
    }

    private struct Line: Encodable {
        var type: String
        var time: String?
        var file: String?
        var paths: [String]?
        var newer: String?
        var message: String?
        var exitCode: Int32?
        var results: [FlashResult]?
    }

    private static func now() -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "HH:mm:ss"
        return f.string(from: Date())
    }

    private func emit(_ line: Line, text: @autoclosure () -> String, error: Bool = false) {
        if json {
            var line = line
            line.time = Self.now()
            if let s = try? JSONText.line(line) { StdOut.write(s + "\n") }
        } else if error {
            StdErr.write("bitflash: \(text())\n")
        } else {
            StdOut.write("[\(Self.now())] \(text())\n")
        }
    }

    func watching(_ paths: [String], folders: Set<String>) {
        let what = paths.map { folders.contains($0) ? "\($0) (new .hex files)" : $0 }.joined(separator: ", ")
        emit(Line(type: "watching", paths: paths), text: "watching \(what); Ctrl-C stops")
    }

    func flashing(_ file: String) {
        if json { emit(Line(type: "flashing", file: file), text: "") }
    }

    func flashed(_ file: String, _ results: [FlashResult]) {
        let name = (file as NSString).lastPathComponent
        if json { return emit(Line(type: "flash", file: file, results: results), text: "") }
        for r in results { emit(Line(type: ""), text: "\(name) → \(r.board): \(Figures.summary(r))") }
    }

    func passedOver(_ file: String, newer: String) {
        emit(
            Line(type: "passed-over", file: file, newer: newer),
            text:
                "\((file as NSString).lastPathComponent): passed over, \((newer as NSString).lastPathComponent) is newer"
        )
    }

    /// `-v`: the watch saw `file` change (or appear); it waits for it to settle.
    func changed(_ file: String, size: Int64) {
        guard verbose else { return }
        StdErr.write("bitflash: watch: \(file): changed (\(size) bytes); waiting for it to settle\n")
    }

    /// `-v`: `file` settled at `size` bytes but does not parse as firmware yet; it is waited on.
    func waiting(_ file: String, size: Int64, _ reason: String) {
        guard verbose else { return }
        StdErr.write(
            "bitflash: watch: \(file): settled at \(size) bytes, not complete firmware yet (\(reason)); "
                + "waiting for it to change\n")
    }

    func incomplete(_ file: String, _ reason: String, waited: Double) {
        emit(
            Line(type: "incomplete", file: file, message: reason),
            text: "warning: \(file): still not complete firmware after \(waited.formatted()) s unchanged (\(reason)); "
                + "not flashed, waiting for it to change", error: true)
    }

    func failed(_ file: String, _ error: any Error) {
        let status = (error as? CLIError)?.exitStatus ?? classify(error)
        let message = (error as? CLIError)?.message ?? describe(error)
        emit(
            Line(type: "error", file: file, message: message, exitCode: status.rawValue),
            text: "error: \((file as NSString).lastPathComponent): not flashed: \(message)", error: true)
    }
}
