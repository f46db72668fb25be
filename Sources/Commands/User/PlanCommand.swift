import ArgumentParser
import FirmwareImage
import Flashing
import Foundation

/// `bitflash plan FILE [--board B]`: what each path would send and how long it would take,
/// without a board.
struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract:
            "Show what each path (partial, full McuMgr, full Nordic DFU) would send and its estimated time, without a board.",
        discussion: """
            For each board the file has a section for (or the --board given): the program region and \
            the blocks and pages partial flashing would send, the MCUboot image a full update over \
            McuMgr would upload, the application a stock board's Nordic bootloader would receive, and each path's estimated time over the standard link profiles (linux-default \
            30 ms, device-requested 15 ms, fast 7.5 ms). Use `bitflash flash FILE --dry-run` to plan \
            against a board's memory map and this connection's measured interval.
            """)

    @Argument(help: "The firmware file: Intel HEX, Universal Hex, UF2, MCUboot image or DFU .zip.")
    var file: String

    @Option(
        help: ArgumentHelp("Plan for this board (default: every board the file has a section for).", valueName: "BOARD")
    )
    var board: String?

    @Flag(help: "Print one JSON object per board.")
    var json = false

    func run() async throws {
        try await runCommand {
            let firmware = try FirmwareFileLoading.loadForFlash(file)
            for b in try boards(firmware) {
                var settings = PlanSettings()
                settings.fileLabel = file
                let plan = try FlashPolicy.plan(firmware, for: b, described: b.displayName, settings: settings)
                let made = BoardlessPlan.make(plan, board: b)
                StdOut.write(
                    json
                        ? try PlanText.json(BoardlessPlanJSON(file: file, plan: made)) + "\n"
                        : PlanText.boardless(made, file: file))
            }
            return .ok
        }
    }

    /// The boards to plan for: the one named, else one per chip family the file has a section for.
    func boards(_ firmware: Firmware) throws -> [Board] {
        if let name = board {
            guard let b = Board(userName: name) else {
                throw CLIError(
                    .usage,
                    "unknown board '\(name)': use microbit-v1, microbit-v2, calliope-mini-1, calliope-mini-2 or calliope-mini-3"
                )
            }
            return [b]
        }
        let families = firmware.sections.compactMap(\.family)
        let found: [Board] = [.microbitV2, .microbitV1].filter { families.contains($0.family) }
        return found.isEmpty ? [.microbitV2] : found
    }
}
