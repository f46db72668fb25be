import ArgumentParser
import FirmwareImage
import Flashing
import Foundation
import Laboratory
import LinkModel
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing

/// `bitflash demo`: the whole story on fresh simulated boards, with the sample programs.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            "Show the whole story on simulated boards: a new runtime (full update), an edit (partial), up to date, and a fallback."
    )

    @Option(help: ArgumentHelp("The kind of board.", valueName: "PROFILE"))
    var profile: SimProfile = .default

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Modelled link: linux-default, device-requested or fast.", valueName: "PROFILE"),
        transform: OptionValues.link)
    var link: String = "device-requested"

    @Flag(
        help: ArgumentHelp(
            "Play everything at once. By default, when standard output is a terminal, the demo plays "
                + "the modelled time at real speed (about 2 minutes) so that it can be watched; into a pipe "
                + "or a file it never waits."))
    var fast = false

    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runCommand {
            Verbose.bootstrap(output.verbose)
            guard profile.mcuboot else {
                throw CLIError(
                    .usage,
                    "the demo needs a board with a full-update path: use --profile \(profile.board.rawValue)-mcuboot")
            }
            let linkProfile: LinkProfile
            do { linkProfile = try LinkProfile(named: link) } catch {
                throw CLIError(.usage, "--link \(link): \(error)")
            }
            let family = profile.board.family
            func sample(_ r: SampleFirmware.RuntimeID, _ p: SampleFirmware.ProgramID) throws -> FlashPlan {
                let image = SampleFirmware.image(family: family, runtime: r, program: p)
                let firmware = Firmware(
                    fileName: "\(r)-\(p).hex", format: .intelHex,
                    sections: [.init(family: family, image: image, warnings: [])])
                return try FlashPlan.make(firmware: firmware, board: profile.board)
            }
            var options = FlashOptions()
            options.optionNames = .commandLine
            var sim = Simulation(link: linkProfile)
            let board = sim.addBoard(
                try profile.makeBoard(holding: profile.factoryImage(), name: "sim", address: SimStore.address(1)))
            var results: [FlashResult] = []
            let pacer = DemoPacer(enabled: !fast && output.mode != .json && DemoPacer.watched)
            func say(_ text: String) { if output.mode != .json { StdOut.write(text) } }

            func step(
                _ title: String, introducing board: String? = nil, _ plan: FlashPlan, on id: BoardID,
                name: String = "sim", options: FlashOptions
            ) -> FlashResult {
                say("\n== \(title)\n" + (board.map { $0 + "\n" } ?? ""))
                let out = SharedOutput(Output.make(output.mode, boards: [name], verbosity: output.verbose))
                pacer.beginStep()
                let run = SimulatedFlash.run(
                    plan: plan, options: options, on: id, named: name, in: &sim,
                    onEvent: { e in
                        pacer.wait(until: e.elapsed)
                        out.event(e)
                    })
                out.result(run.result)
                out.finish([run.result])
                Verbose.dump(run.trace, names: [name])
                return run.result
            }

            say(
                "A simulated \(profile.board.displayName) with an MCUboot bootloader, named sim, runs the sample program "
                    + "(runtime r1, 'heart'). Link: \(linkProfile.name), modelled time"
                    + (pacer.isEnabled ? ", played at real speed (--fast to skip the waits).\n" : ".\n"))
            results.append(
                step(
                    "1. A new runtime (r2): partial flashing cannot apply, so bitflash sends a full update",
                    try sample(.r2, .heart), on: board, options: options))
            let edit = try sample(.r2, .counter)
            results.append(
                step(
                    "2. The program is edited (same runtime): only the program region is sent", edit, on: board,
                    options: options))
            results.append(step("3. The same file again: nothing to do", edit, on: board, options: options))

            // A flaky link: the link drops four times during partial flashing; bitflash gives up
            // on partial flashing at the fourth drop (its limit is three reconnections) and saves
            // the board with a full update on a new connection.
            var flaky = Simulation(
                link: linkProfile,
                faults: {
                    var f = FaultPlan(seed: 7); f.disconnectAtWrite = [60, 120, 180, 240]; return f
                }())
            let second = flaky.addBoard(
                try profile.makeBoard(
                    holding: SampleFirmware.image(family: family, runtime: .r2, program: .heart),
                    name: "sim-2", address: SimStore.address(2)))
            swap(&sim, &flaky)
            results.append(
                step(
                    "4. The link keeps dropping during partial flashing: bitflash reconnects three times, "
                        + "gives up at the fourth drop and falls back to a full update",
                    introducing: "A second board, sim-2, runs runtime r2 with 'heart' (as sim did before the edit); "
                        + "its link is flaky.",
                    edit, on: second, name: "sim-2", options: options))
            swap(&sim, &flaky)

            // The same edit as a full update, for the comparison.
            let third = sim.addBoard(
                try profile.makeBoard(
                    holding: SampleFirmware.image(family: family, runtime: .r2, program: .heart),
                    name: "sim-3", address: SimStore.address(3)))
            var forced = options
            forced.mode = .full
            let full = step(
                "5. For comparison: the same edit as a forced full update",
                introducing: "A third board, sim-3, is in the same state as sim-2 was, on a steady link.", edit,
                on: third, name: "sim-3", options: forced)
            results.append(full)

            let partial = results[1]
            if output.mode == .json {
                let ratio = partial.seconds > 0 ? full.seconds / partial.seconds : 0
                StdOut.write(
                    String(
                        format:
                            "{\"type\":\"summary\",\"partialSeconds\":%.3f,\"fullSeconds\":%.3f,\"speedup\":%.2f}\n",
                        partial.seconds, full.seconds, ratio))
            } else {
                StdOut.write(
                    "\n== Summary\n"
                        + SummaryTable.render(
                            results, labels: ["1 new runtime", "2 edit", "3 same file", "4 flaky link", "5 forced full"]
                        ))
                StdOut.write(
                    String(
                        format: "An edit of the program: partial %@ (%@) against full %@ (%@): %.1f× faster.\n",
                        Figures.seconds(partial.seconds), Figures.bytes(partial.bytesSent),
                        Figures.seconds(full.seconds), Figures.bytes(full.bytesSent),
                        full.seconds / max(partial.seconds, 0.001)))
            }
            let expected: [FlashPath?] = [.full, .partial, .upToDate, .full, .full]
            guard results.map(\.path) == expected, results.allSatisfy({ $0.error == nil && $0.verified }),
                results[3].fallback
            else {
                throw CLIError(
                    .flashFailed, "the demo did not go as expected: \(results.map { $0.path?.rawValue ?? "failed" })")
            }
            return .ok
        }
    }
}
