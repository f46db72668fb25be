import ArgumentParser
import FirmwareImage
import Flashing
import Foundation
import Laboratory
import SimulatedBoard
import SimulatedFlashing

/// `bitflash-lab sim replay TRACE FILE`: the board's side of a recorded flash, played back to the client.
struct SimReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a trace's board side against the client and report where the client differs.",
        discussion: """
            Tells the client flow (the same one `flash` runs) every event of the recording again, in order: \
            connections, notifications, timers, link losses. Every write, subscription and connection the client \
            asks for must match the recording. Prints the first line where the client differs, or that it \
            behaved and ended as recorded. FILE is the firmware file of the recorded flash (its SHA-256 is \
            checked). Exit codes: 0 as recorded, 65 the client differs (or the trace cannot be replayed), \
            66 unreadable file.
            """)

    @Argument(help: "The trace (JSON lines from `bitflash flash --trace`).")
    var trace: String

    @Argument(help: "The firmware file that was flashed.")
    var file: String

    @Option(help: ArgumentHelp("The board to replay (default: the trace's only board).", valueName: "NAME"))
    var board: String?

    @Option(
        name: .customLong("dfu-image"),
        help: ArgumentHelp("The MCUboot image the recorded flash was given with --dfu-image.", valueName: "FILE"))
    var dfuImage: String?

    func run() async throws {
        try await runCommand {
            let lines = try TraceFile.read(trace)
            guard let header = FlashReplay.header(of: lines) else {
                throw CLIError(
                    .badFirmware,
                    "\(trace): the trace has no header line (it was recorded by an older bitflash); "
                        + "record it again with `bitflash-lab flash FILE --simulate --trace \((trace as NSString).lastPathComponent)`"
                )
            }
            let name = try pickBoard(FlashReplay.boards(in: lines))
            let sha = TraceHeader.sha256(of: file)
            if sha.isEmpty { _ = try FirmwareFileLoading.readBytes(file) }
            if sha != header.sha256 {
                StdErr.write(
                    "bitflash: warning: \(file) is not the recorded file \(header.file) (SHA-256 differs); "
                        + "the client will differ where the data differs\n")
            }
            var plan = try makePlan(header)
            plan.resume = header.resume?[name]
            guard let mode = FlashMode(rawValue: header.mode),
                let upgrade = UpgradeModeArgument(rawValue: header.upgradeMode)
            else {
                throw CLIError(
                    .badFirmware,
                    "\(trace): the header names mode '\(header.mode)' / '\(header.upgradeMode)', which this bitflash does not know"
                )
            }
            let options = FlashCommand.options(mode: mode, upgradeMode: upgrade, verbosity: header.verbosity)
            let replay = FlashReplay.run(lines, board: name, plan: plan, options: options)
            let report = replay.report
            var out =
                "replayed \(report.inputs) recorded events to the client of \(name): \(report.matched) writes, "
                + "subscriptions and connection requests as recorded\n"
            if let d = report.divergence {
                StdOut.write(out)
                throw CLIError(
                    .badFirmware,
                    "the client differs from the recording at \((trace as NSString).lastPathComponent) \(d)")
            }
            let expected = replay.recorded
            out += "outcome: \(replay.replayed?.summary ?? "unfinished (the recording ends before the client did)")"
            if let expected, !replay.endedAsRecorded {
                StdOut.write(out + "\n")
                throw CLIError(.badFirmware, "the client ended differently: the recording ended \(expected.summary)")
            }
            StdOut.write(out + (expected == nil ? " (the trace records no result)" : ", as recorded") + "\n")
            return .ok
        }
    }

    private func pickBoard(_ boards: [String]) throws -> String {
        if let board {
            guard boards.contains(board) else {
                throw CLIError(.usage, "--board \(board): the trace has boards \(boards.joined(separator: ", "))")
            }
            return board
        }
        guard boards.count == 1, let only = boards.first else {
            throw CLIError(
                .usage,
                "the trace holds \(boards.count) boards (\(boards.joined(separator: ", "))): choose one with --board")
        }
        return only
    }

    private func makePlan(_ header: TraceHeader) throws -> FlashPlan {
        guard let target = Board(userName: header.board) else {
            throw CLIError(.badFirmware, "\(trace): unknown board '\(header.board)' in the header")
        }
        let firmware = try FirmwareFileLoading.loadForFlash(file)
        let dfu = try dfuImage.map { path -> MCUbootImage in
            let given = try FirmwareFileLoading.loadForFlash(path)
            if let image = given.mcuboot { return image }
            if let section = given.sections.first, let found = try? MCUbootImage.locate(in: section.image) {
                return found.image
            }
            throw CLIError(.badFirmware, "\(path): holds no MCUboot image")
        }
        if header.dfuImage != nil, dfu == nil {
            throw CLIError(
                .usage, "the recorded flash was given --dfu-image \(header.dfuImage ?? ""): give it to the replay too")
        }
        do {
            return try FlashPlan.make(firmware: firmware, board: target, dfuImage: dfu)
        } catch let error as FirmwareImageError {
            throw CLIError(.badFirmware, "\(file): \(error.message); the recorded board is a \(target.displayName)")
        }
    }
}
