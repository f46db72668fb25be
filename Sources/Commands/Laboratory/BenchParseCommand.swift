import ArgumentParser
import FirmwareImage
import Foundation
import Laboratory

/// `bitflash-lab bench parse [--file F] [--iterations N]`: firmware parser throughput, next to Python `intelhex`.
struct BenchParseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Measure the Intel HEX / Universal Hex parser (MB/s, best of N) against Python intelhex.",
        discussion: """
            Without --file: the largest Universal Hex of the shared corpus (../shared/testdata, or \
            BITFLASH_TESTDATA), else a generated one of similar size. The parse runs from bytes in \
            memory; intelhex is timed as IntelHex(path) in a python3 subprocess. intelhex cannot read \
            Universal Hex records, so a Universal Hex is given to it as its per-board plain hexes \
            (split before timing). Build with `swift build -c release` to measure.
            """)

    @Option(help: "The file to parse (default: the largest Universal Hex in the corpus).")
    var file: String?

    @Option(
        parsing: .unconditional, help: Limits.iterations.help("Timed parses; the best counts", valueName: "N"),
        transform: Limits.iterations.transform)
    var iterations = 20

    @Flag(help: "Do not run Python intelhex.")
    var skipPython = false

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
