import ArgumentParser
import Flashing
import Foundation
import Laboratory
import PartialFlashingFrames
import SimulatedBoard
import Transport

/// `bitflash-lab trace show FILE`: a trace written by `flash --trace FILE`, readable.
struct TraceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract:
            "Look at traces recorded with `bitflash-lab flash --trace FILE` or `bitflash-lab sim campaign --runs 1 --trace FILE`.",
        subcommands: [TraceShowCommand.self])
}

struct TraceShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print a trace as aligned lines: time, board, kind, what happened.")

    @Argument(help: "The trace file (JSON lines).")
    var file: String

    @Option(help: ArgumentHelp("Only this board's lines.", valueName: "NAME"))
    var board: String?

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp(
            "Only these kinds (write, input, notify, report, connect, fault, meta, result, ...).", valueName: "KIND"))
    var kind: [String] = []

    func run() async throws {
        try await runCommand {
            let entries = try TraceFile.read(file)
            let shown = entries.filter { e in
                (board == nil || e.name == board) && (kind.isEmpty || kind.contains(e.kind))
            }
            let width = max(5, shown.map(\.name.count).max() ?? 0)
            var out = ""
            for e in shown {
                out += String(format: "%11.6f s  ", Double(e.t) / 1e6)
                out += e.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                out += e.kind.padding(toLength: 12, withPad: " ", startingAt: 0) + e.text + "\n"
            }
            let boards = Set(entries.filter { $0.board >= 0 }.map(\.name)).sorted()
            out += "\(shown.count) of \(entries.count) lines; boards: \(boards.joined(separator: ", "))"
            if let last = entries.last { out += String(format: "; last at %.3f s modelled", Double(last.t) / 1e6) }
            StdOut.write(out + "\n")
            return .ok
        }
    }
}

extension FlashCommand {
    func traceHeader(profile: SimProfile, plans: [(name: String, resume: ResumePoint?)]) -> TraceHeader {
        let points = Dictionary(
            plans.compactMap { p in p.resume.map { (p.name, $0) } }, uniquingKeysWith: { a, _ in a })
        return TraceHeader(
            file: (file as NSString).lastPathComponent, sha256: TraceHeader.sha256(of: file),
            board: board ?? profile.board.rawValue, profile: "\(profile)", mode: mode.rawValue,
            upgradeMode: upgradeMode.rawValue, verbosity: output.verbose,
            dfuImage: dfuImage.map { ($0 as NSString).lastPathComponent }, resume: points.isEmpty ? nil : points)
    }
}
