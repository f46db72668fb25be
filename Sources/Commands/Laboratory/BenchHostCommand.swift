import ArgumentParser
import FirmwareImage
import Flashing
import Foundation
import Laboratory
import LinkModel
import SampleFirmware

/// `bitflash-lab bench host`: the CPU hot paths, timed on this computer.
struct BenchHostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Time bitflash's CPU hot paths: parsing (against Python intelhex), planning, SMP, simulated flashes.",
        discussion: """
            Build with `swift build -c release` first: a debug build is many times slower. Each \
            operation runs in batches for about 0.2 s; the best batch gives the time per operation. \
            The simulated flashes run once each, as the flash benchmark runs them, and report real \
            (wall-clock) time next to the modelled time.
            """)

    @Option(
        parsing: .unconditional,
        help: Limits.iterations.help("Timed parses of the parse benchmark; the best counts", valueName: "N"),
        transform: Limits.iterations.transform)
    var iterations = 10

    @Flag(help: "Do not run Python intelhex.")
    var skipPython = false

    func run() throws {
        #if DEBUG
            print("note: this is a debug build; build with `swift build -c release` for meaningful figures\n")
        #endif
        let parse = try BenchParseCommand.parse(
            ["--iterations", String(iterations)] + (skipPython ? ["--skip-python"] : []))
        try parse.run()
        print("")

        let corpus = CorpusLocator.directory()
        let real =
            corpus.map { dir in
                BenchScenario.corpus { path in
                    (try? Data(contentsOf: dir.appendingPathComponent(path))).map { [UInt8]($0) }
                }
            } ?? []
        let edit =
            real.first { $0.name == "V2 small-heart → serial-counter" }
            ?? BenchScenario.samples(boards: [.microbitV2]).first { $0.name.hasSuffix("heart → large") }!
        print("hot paths (best batch of about 0.2 s each):")
        var operations: [HostBenchmark.Operation] = []
        if let image = try? edit.update.image(for: edit.board),
            let plan = HostBenchmark.blockPlanning(image: image, family: edit.board.family)
        {
            operations.append(plan)
        }
        operations += [HostBenchmark.smpEncoding(), HostBenchmark.smpDecoding(), HostBenchmark.cborEncoding()]
        for op in operations {
            let perOp = HostBenchmark.time(op.body)
            print("  \(pad(op.name, 26)) \(pad(HostBenchmark.format(perOp), 12)) per op (\(op.unit))")
        }
        print("")
        print("simulated flashes (device-requested, one run each, trace off):")
        let clock = ContinuousClock()
        for (scenario, strategy) in [(edit, BenchStrategy.auto), (edit, .fullBest), (edit, .fullReference)] {
            var run: BenchRun?
            let wall = clock.measure { run = BenchRunner.run(scenario, profile: .deviceRequested, strategy: strategy) }
            guard let run else { continue }
            let size =
                (try? FlashPlan.make(firmware: scenario.update, board: scenario.board).fullImage?.bytes.count) ?? 0
            let what = run.path == "partial" ? "\(run.payloadBytes) B program" : "\(size) B image"
            let goal = run.path == "full" ? (wall < .seconds(1) ? ", under the 1 s goal" : ", OVER the 1 s goal") : ""
            print(
                "  \(pad(scenario.name + ", " + strategy.title, 52)) \(what): modelled \(BenchTable.seconds(run.modelledSeconds)) s, "
                    + "real \(HostBenchmark.format(wall.seconds)), CPU \(String(format: "%.1f", run.hostCPUMilliseconds)) ms\(goal)"
            )
        }
        print("")
        print(
            "peak RSS: \(String(format: "%.1f", Double(HostBenchmark.peakRSS()) / 1e6)) MB (getrusage ru_maxrss of this process)"
        )
    }
}

private func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}
