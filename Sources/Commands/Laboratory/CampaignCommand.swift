import ArgumentParser
import Diagnostics
import FirmwareImage
import Flashing
import Foundation
import Laboratory
import LinkModel
import SimulatedBoard

extension HostileKind: ExpressibleByArgument {}

/// The path option of `sim campaign`: one path, or all three in turn.
enum CampaignPathArgument: String, ExpressibleByArgument, CaseIterable {
    case partial, full, auto, nordic, all

    var paths: [CampaignPath] {
        switch self {
        case .partial: return [.partial]
        case .full: return [.full]
        case .auto: return [.auto]
        case .nordic: return [.nordic]
        case .all: return CampaignPath.allCases
        }
    }
}

/// `bitflash-lab sim campaign --runs N --seed S`: a seeded fault campaign on simulated boards,
/// every run checked against the flashing invariants.
struct SimCampaignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "campaign",
        abstract: "Flash simulated boards many times under injected faults and check every run.",
        discussion: """
            Each run draws a board, the image it holds, the image flashed and the faults (lost \
            writes, lost and late notifications, disconnects at writes and times, device resets, \
            pairing-mode timeouts, slow erases, refused connections, SMP busy answers and \
            flash-write failures) from the seed: what a BLE link and a board can do. --hostile \
            adds a board that lies, or a link that duplicates or reorders notifications, which \
            a BLE link never does. After each run: success means the flash is \
            byte-exact and verified; failure needs a clear error and a plain run that repairs the \
            board; no run may reach its deadline, exceed its retry bounds or write outside the \
            region the board declared. Exit code 0 when every invariant held, 74 otherwise, \
            64 for a bad command line. Times are modelled seconds.
            """)

    @Option(
        parsing: .unconditional, help: Limits.runs.help("How many runs", valueName: "N"),
        transform: Limits.runs.transform)
    var runs: Int = 1000

    @Option(
        parsing: .unconditional,
        help: Limits.seed.help("The campaign's seed: the same seed gives the same runs", valueName: "SEED"),
        transform: Limits.seed.transform)
    var seed: UInt64 = 1

    @Option(
        help:
            "partial, full, auto, nordic (stock boards: Nordic DFU, some starting in DfuTarg), or all (the four in turn)."
    )
    var path: CampaignPathArgument = .all

    @Option(
        help: ArgumentHelp(
            "Only boards of this kind (repeatable); a name without -mcuboot keeps partial runs on stock boards. Default: microbit-v2, microbit-v1, calliope-mini-3.",
            valueName: "PROFILE"))
    var profile: [SimProfile] = []

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "A fixed modelled link (linux-default, device-requested, fast, or an interval such as 11.25ms). Default: one of the three named profiles per run.",
            valueName: "PROFILE"),
        transform: OptionValues.link)
    var link: String?

    @Option(
        help: ArgumentHelp(
            "Every board lies (\(HostileKind.firmwareKinds.map(\.rawValue).joined(separator: ", "))), or every link does what a BLE link never does (\(HostileKind.allCases.filter(\.isLinkFault).map(\.rawValue).joined(separator: ", "))). The plain run after a failure is on the honest board and link.",
            valueName: "KIND"))
    var hostile: HostileKind?

    @Option(
        name: .customLong("from"), parsing: .unconditional,
        help: Limits.firstRun.help(
            "Start at this run (runs are numbered from 0, as violations name them): `--from 1790 --runs 1` runs run 1790 of the same seed and path again on its own",
            valueName: "RUN"),
        transform: Limits.firstRun.transform)
    var firstRun: Int = 0

    @Option(
        help: ArgumentHelp(
            "With --runs 1: write that run's trace to FILE (every write, notification, fault and timer, as JSON lines; the killed run and the repair run too, each under its own name; read it with `bitflash-lab trace show`).",
            valueName: "FILE"))
    var trace: String?

    @Option(
        parsing: .unconditional,
        help: Limits.progressSeconds.help(
            "Every SECONDS of real time, print the runs done and the violations so far to standard error (0: never)",
            valueName: "SECONDS"),
        transform: Limits.progressSeconds.transform)
    var progress: Int = 30

    @Flag(help: "Print the report as JSON.")
    var json = false

    func validate() throws {
        guard trace == nil || runs == 1 else {
            throw ValidationError("--trace records one run: add --runs 1 (and --from RUN to pick the run)")
        }
    }

    func run() async throws {
        try await runCommand {
            var linkProfile: LinkProfile?
            if let link {
                do { linkProfile = try LinkProfile(named: link) } catch {
                    throw CLIError(.usage, "--link \(link): \(error)")
                }
            }
            var boards: [Board] = []
            for p in profile where !boards.contains(p.board) { boards.append(p.board) }
            let kinds: [CampaignBoardKind]? = profile.isEmpty ? nil : profile.contains { $0.mcuboot } ? nil : [.stock]
            var configuration = FaultCampaign.Configuration(
                runs: runs, seed: seed, paths: path.paths, link: linkProfile)
            if !boards.isEmpty { configuration.boards = boards }
            configuration.kinds = kinds
            configuration.hostile = hostile
            configuration.firstRun = firstRun
            configuration.recordsTrace = trace != nil
            var campaign = FaultCampaign(configuration)
            let clock = ContinuousClock()
            let started = clock.now
            var lastProgress = started
            let report = campaign.run { soFar in
                guard progress > 0, soFar.runs < runs, clock.now - lastProgress >= .seconds(progress) else { return }
                lastProgress = clock.now
                let violations = soFar.violations.count
                StdErr.write(
                    "campaign: \(soFar.runs) of \(runs) runs, \(violations) invariant violation\(violations == 1 ? "" : "s") so far"
                        + " (\(Int((lastProgress - started).seconds)) s)\n")
            }
            let elapsed = clock.now - started
            if let trace, !campaign.lastTraces.isEmpty {
                // One trace file: each part of the run (killed run, run under faults, repair run)
                // as a board of its own name, readable by `bitflash-lab trace show`.
                var text = Data()
                for (part, recorded) in campaign.lastTraces {
                    text += try TraceFile.encode(recorded, names: [part])
                }
                try OutputFile.write(Array(text), to: trace, what: "the trace")
            }
            if json {
                StdOut.write(try JSONText.document(report) + "\n")
            } else {
                StdOut.write(report.table())
                StdOut.write(
                    "real time".padding(toLength: 34, withPad: " ", startingAt: 0)
                        + String(
                            format: "%.1f s (%.0f runs/s)\n", elapsed.seconds,
                            Double(report.runs) / max(elapsed.seconds, 1e-9)))
            }
            guard report.passed else {
                throw CLIError(
                    .flashFailed,
                    "\(report.violations.count) invariant violation\(report.violations.count == 1 ? "" : "s") in \(report.runs) runs (seed \(seed)): see the list above"
                )
            }
            return .ok
        }
    }
}
