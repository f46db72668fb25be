import ArgumentParser
import FirmwareImage
import Foundation
import Laboratory

/// `bitflash-lab bench parse [--file F] [--iterations N] [--processes N]`: firmware parser throughput,
/// next to Python `intelhex`, in-process and as whole processes.
struct BenchParseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Measure the Intel HEX / Universal Hex parser (MB/s, best of N) against Python intelhex.",
        discussion: """
            Without --file: the largest Universal Hex of the shared corpus (../shared/testdata, or \
            BITFLASH_TESTDATA), else a generated one of similar size. The parse runs from bytes in \
            memory; intelhex is timed as IntelHex(path) in a python3 subprocess. intelhex cannot read \
            Universal Hex records, so a Universal Hex is given to it as its per-board plain hexes \
            (split before timing). With --processes N: also N runs of `bitflash inspect FILE` as a \
            whole process against N python3 processes that parse the file with intelhex, alternately, \
            with the median wall and CPU time of each. Build with \
            `swift build -c release --static-swift-stdlib` to measure.
            """)

    @Option(help: "The file to parse (default: the largest Universal Hex in the corpus).")
    var file: String?

    @Option(
        parsing: .unconditional, help: Limits.iterations.help("Timed parses; the best counts", valueName: "N"),
        transform: Limits.iterations.transform)
    var iterations = 20

    @Flag(help: "Do not run Python intelhex.")
    var skipPython = false

    @Option(
        parsing: .unconditional,
        help: Limits.iterations.help(
            "Whole-process runs of `bitflash inspect FILE` and of python3 with intelhex", valueName: "N"),
        transform: Limits.iterations.transform)
    var processes: Int?

    @Option(help: "The bitflash executable the whole-process runs start (default: the one beside this one).")
    var bitflash: String?

    func run() throws {
        let baselineRSS = HostBenchmark.peakRSS()
        let (name, path, bytes) = try input()
        let firmware: Firmware
        do {
            firmware = try Firmware.parse(bytes, fileName: name)
        } catch let error as FirmwareImageError {
            FirmwareFileLoading.report(error, file: path ?? name)
            throw SysExit.dataError
        }
        let (best, median) = try ParserBenchmark.timeParses(bytes, name: name, iterations: iterations)
        let rss = HostBenchmark.peakRSS()
        let mb = Double(bytes.count) / 1e6
        let swiftRate = mb / best

        print(
            "parse benchmark: \(name) (\(bytes.count) bytes, \(firmware.format.displayName), \(firmware.sections.count) section\(firmware.sections.count == 1 ? "" : "s"))"
        )
        print(
            "  bitflash:  best \(ms(best)), median \(ms(median)) over \(iterations) parses = \(fmt(swiftRate)) MB/s (best)"
        )
        print(
            "  peak RSS:  \(fmt(Double(rss) / 1e6)) MB (getrusage ru_maxrss of this process; \(fmt(Double(baselineRSS) / 1e6)) MB before reading the file)"
        )

        guard !skipPython else { return }
        let temporary = path == nil ? ParserBenchmark.writeTemporary(bytes, name: name) : nil
        defer { if let temporary { try? FileManager.default.removeItem(atPath: temporary) } }
        guard let path = path ?? temporary else {
            print("  intelhex:  not run (could not write a temporary file)")
            return
        }
        switch ParserBenchmark.runIntelHex(path: path, iterations: min(iterations, 5)) {
        case .success(let r):
            let rate = mb / r.best
            print(
                "  intelhex:  best \(ms(r.best)) over \(min(iterations, 5)) loads = \(fmt(rate)) MB/s (intelhex \(r.version), \(r.mode))"
            )
            print("  ratio:     \(fmt(swiftRate / rate))x intelhex throughput")
        case .failure(let reason):
            print("  intelhex:  not run (\(reason))")
        }
        if let processes { compareProcesses(path: path, runs: processes) }
    }

    /// The whole-process comparison: `bitflash inspect` against python3 with intelhex, per process.
    private func compareProcesses(path: String, runs: Int) {
        let executable =
            bitflash
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("bitflash").path
        let split: (files: [String], split: Bool)
        switch ProcessStartBenchmark.splitForIntelHex(path: path) {
        case .success(let s): split = s
        case .failure(let reason):
            print("  processes: not run (\(reason))")
            return
        }
        defer { if split.split { for f in split.files { try? FileManager.default.removeItem(atPath: f) } } }
        let peer = split.split ? "\(split.files.count) per-board plain hexes" : "the file"
        print("  processes: \(runs) runs each, alternately (median wall / median CPU per process)")
        switch ProcessStartBenchmark.compare(
            bitflash: executable, path: path, intelhexFiles: split.files, runs: runs)
        {
        case .success(let c):
            print(
                "    bitflash inspect FILE:    \(ms(c.bitflash.medianWall)) / \(ms(c.bitflash.medianCPU)) (\(executable))"
            )
            print(
                "    python3 intelhex.IntelHex: \(ms(c.intelhex.medianWall)) / \(ms(c.intelhex.medianCPU)) (on \(peer))"
            )
            print("    ratio:                    \(fmt(c.wallRatio))x wall, \(fmt(c.cpuRatio))x CPU")
        case .failure(let reason):
            print("    not run (\(reason))")
        }
    }

    // MARK: Input

    private func input() throws -> (name: String, path: String?, bytes: [UInt8]) {
        if let file {
            return ((file as NSString).lastPathComponent, file, try FirmwareFileLoading.readBytes(file))
        }
        if let corpus = CorpusLocator.directory(), let largest = CorpusLocator.largestUniversalHex(in: corpus) {
            return (largest.lastPathComponent, largest.path, try FirmwareFileLoading.readBytes(largest.path))
        }
        print("(corpus not found: parsing a generated Universal Hex)")
        return ("generated-universal.hex", nil, SyntheticUniversalHex.make())
    }

    // MARK: Helpers

    private func ms(_ s: Double) -> String { s < 1 ? "\(fmt(s * 1000)) ms" : "\(fmt(s)) s" }

    private func fmt(_ v: Double) -> String { String(format: v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v) }
}
