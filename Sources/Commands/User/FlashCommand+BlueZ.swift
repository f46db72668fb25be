import BlueZFlashing
import Diagnostics
import FirmwareImage
import Flasher
import Flashing
import Foundation
import LinkModel

/// `bitflash flash FILE --device ADDR|NAME` (repeatable) and `--all-in-range`: real boards over
/// BlueZ, flashed by `BlueZFlasher` (each board on its own bus connection, all at once) and
/// reported like a simulated flash (progress lines, JSON events, one result per board and, for
/// several boards, the summary table).
extension FlashCommand {
    /// - Parameter only: the boards to flash (`--retry-failed`), instead of --device or --all-in-range.
    func runOnDevices(_ only: [String]? = nil, firmware given: Firmware?, output makeOutput: OutputMaker) async throws
        -> BoardsRun
    {
        Verbose.bootstrap(output.verbose)
        let firmware = try given ?? FirmwareFileLoading.loadForFlash(file)
        let library = try self.flasher(.bluez(bluetooth.settings))
        let flasher = library.bluez!
        let queries: [String]
        if let only {
            queries = only
        } else if allInRange {
            queries = try await boardsInRange(flasher)
        } else if devices.isEmpty {
            queries = [try await defaultTarget(flasher)]
        } else {
            queries = devices
        }
        // A dry run prints plans, not progress and results.
        let out = SharedOutput(dryRun ? SilentOutput() : makeOutput(output.mode, queries, output.verbose))
        if !dryRun, let forecast = await library.forecastRealClass(firmware, boards: queries) {
            out.classEstimate(ClassPreview(forecast))
        }
        var finished: [BoardFlashResult] = []
        for await update in flasher.flash(firmware, on: queries) {
            switch update {
            case let .event(event):
                out.event(event)
            case let .warning(_, message):
                StdErr.write("bitflash: warning: \(message)\n")
            case let .finished(result):
                if !dryRun, result.address != nil || result.name != nil {
                    out.identify([result.board: BoardIdentity(name: result.name, address: result.address)])
                }
                if !dryRun { out.result(result.result) }
                finished.append(result)
            }
        }
        let order = { (r: BoardFlashResult) in queries.firstIndex(of: r.board) ?? queries.count }
        let outcomes = finished.sorted { order($0) < order($1) }
        if dryRun {
            return .planned(
                try printPlans(
                    outcomes.map { entry -> (board: String, outcome: Result<SessionOutcome, any Error>) in
                        (
                            entry.board,
                            entry.session
                                ?? .failure(
                                    CLIError(
                                        ExitStatus(entry.result), entry.result.error ?? "the board could not be reached"
                                    )
                                )
                        )
                    }))
        }
        let results = outcomes.map(\.result)
        var identities: [String: BoardIdentity] = [:]
        for entry in outcomes where entry.address != nil || entry.name != nil {
            identities[entry.board] = BoardIdentity(name: entry.name, address: entry.address, adapter: entry.adapter)
        }
        out.finish(results, identities: identities)
        recordClassRun(results, identities: identities)
        return .flashed(results)
    }

    /// The board a flash without --device, --all-in-range or --simulate takes: the one this
    /// computer flashed last, when it is in range (named on the first line); else the command
    /// stops with the boards in range to choose from (64). Never a simulated board.
    private func defaultTarget(_ flasher: BlueZFlasher) async throws -> String {
        let advice =
            "name one with --device ADDR|NAME, flash every board in range with --all-in-range, or try a "
            + "simulated board with --simulate"
        let target: DefaultTarget
        do { target = try await flasher.defaultTarget() } catch {
            throw CLIError(.usage, "no board given: \(advice) (no board could be listed: \(describe(error)))")
        }
        switch target {
        case let .lastBoard(last):
            StdErr.write(
                "bitflash: flashing \(last.described), the board this computer flashed last (--device names another)\n")
            return last.address
        case let .choose(seen, last):
            let boards = seen.filter { $0.family != .other }
            let listed =
                boards.isEmpty
                ? "no board is in range"
                : "in range: "
                    + boards.map { b in b.name.map { "\($0) (\(b.address))" } ?? b.address }
                    .joined(separator: ", ")
            let missing = last.map { "; \($0.described), the board this computer flashed last, is not in range" } ?? ""
            throw CLIError(.usage, "no board given: \(advice); \(listed)\(missing)")
        }
    }

    /// The addresses of every board a scan finds.
    private func boardsInRange(_ flasher: BlueZFlasher) async throws -> [String] {
        let found = try await flasher.scan()
        guard !found.isEmpty else {
            throw CLIError(
                .boardNotFound,
                "no board in range after \(bluetooth.scanSeconds.formatted()) s; check they are "
                    + "powered and advertising (pairing mode: hold A+B, press reset)")
        }
        return found.map(\.address)
    }
}
