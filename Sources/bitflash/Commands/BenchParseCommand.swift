import ArgumentParser
import FirmwareImage
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `bitflash bench parse [--file F] [--iterations N]`: firmware parser throughput, next to Python `intelhex`.
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

    @Option(help: "Timed parses; the best counts.")
    var iterations = 20

    @Flag(help: "Do not run Python intelhex.")
    var skipPython = false

    func validate() throws {
        guard iterations >= 1 else { throw ValidationError("--iterations must be at least 1") }
    }

    func run() throws {
        let baselineRSS = BenchHostCommand.peakRSS()
        let (name, path, bytes) = try input()
        let firmware: Firmware
        do {
            firmware = try Firmware.parse(bytes, fileName: name)
        } catch let error as FirmwareImageError {
            FirmwareFileLoading.report(error, file: path ?? name)
            throw SysExit.dataError
        }
        var times: [Double] = []
        var sink = 0
        let clock = ContinuousClock()
        for _ in 0..<iterations {
            var parsed: Firmware?
            let d = try clock.measure { parsed = try Firmware.parse(bytes, fileName: name) }
            sink &+= parsed?.sections.count ?? 0
            times.append(seconds(d))
        }
        let rss = BenchHostCommand.peakRSS()
        times.sort()
        let best = times[0], median = times[times.count / 2]
        let mb = Double(bytes.count) / 1e6
        let swiftRate = mb / best

        print("parse benchmark: \(name) (\(bytes.count) bytes, \(firmware.format.displayName), \(firmware.sections.count) section\(firmware.sections.count == 1 ? "" : "s"))")
        print("  bitflash:  best \(ms(best)), median \(ms(median)) over \(iterations) parses = \(fmt(swiftRate)) MB/s (best)")
        print("  peak RSS:  \(fmt(Double(rss) / 1e6)) MB (getrusage ru_maxrss of this process; \(fmt(Double(baselineRSS) / 1e6)) MB before reading the file)")
        if sink < 0 { print("") }

        guard !skipPython else { return }
        let temporary = path == nil ? writeTemporary(bytes, name: name) : nil
        defer { if let temporary { try? FileManager.default.removeItem(atPath: temporary) } }
        guard let path = path ?? temporary else {
            print("  intelhex:  not run (could not write a temporary file)")
            return
        }
        switch runIntelHex(path: path, iterations: min(iterations, 5)) {
        case .success(let r):
            let rate = mb / r.best
            print("  intelhex:  best \(ms(r.best)) over \(min(iterations, 5)) loads = \(fmt(rate)) MB/s (intelhex \(r.version), \(r.mode))")
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

    private func writeTemporary(_ bytes: [UInt8], name: String) -> String? {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-bench-\(getpid())-\(name)")
        do { try Data(bytes).write(to: url) } catch { return nil }
        return url.path
    }

    // MARK: Python intelhex

    struct IntelHexResult {
        var best: Double
        var mode: String
        var version: String
    }

    private func runIntelHex(path: String, iterations: Int) -> Result<IntelHexResult, BenchError> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.pythonScript, path, String(iterations)]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { return .failure(BenchError("python3 not found: \(error)")) }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            let message = String(decoding: errData, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? "exit \(process.terminationStatus)"
            return .failure(BenchError("python3 failed: \(message)"))
        }
        if let error = object["error"] as? String { return .failure(BenchError(error)) }
        guard let best = object["best"] as? Double else { return .failure(BenchError("python3 printed no timing")) }
        return .success(IntelHexResult(best: best, mode: object["mode"] as? String ?? "",
                                       version: object["version"] as? String ?? "?"))
    }

    struct BenchError: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    /// Times `IntelHex(path)`, best of N. A Universal Hex is split into per-board plain hex files first
    /// (0D records become 00, block records are dropped), outside the timing.
    static let pythonScript = #"""
import sys, time, json, os, tempfile
try:
    from intelhex import IntelHex
except ImportError as e:
    print(json.dumps({"error": "Python intelhex not installed (%s)" % e})); sys.exit(0)
try:
    from importlib.metadata import version
    ver = version("intelhex")
except Exception:
    ver = "?"
path, n = sys.argv[1], int(sys.argv[2])

def split_universal(path):
    boards, order, cur, last_addr = {}, [], None, None
    with open(path, "r", newline="") as f:
        for raw in f:
            line = raw.strip()
            if not line.startswith(":") or len(line) < 11:
                continue
            t = int(line[7:9], 16)
            if t in (2, 4):
                last_addr = line
                if cur is not None:
                    boards[cur].append(line)
            elif t == 0x0A:
                cur = int(line[9:13], 16)
                if cur not in boards:
                    boards[cur] = []
                    order.append(cur)
                if last_addr:
                    boards[cur].append(last_addr)
            elif cur is None:
                continue
            elif t == 0x0D:
                body = bytearray(bytes.fromhex(line[1:-2]))
                body[3] = 0
                boards[cur].append(":" + body.hex().upper() + "%02X" % ((-sum(body)) & 0xFF))
            elif t in (0, 3, 5):
                boards[cur].append(line)
    files = []
    for b in order:
        fd, name = tempfile.mkstemp(suffix="-%04x.hex" % b)
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(boards[b] + [":00000001FF"]) + "\n")
        files.append(name)
    return files

mode = "IntelHex(path) on the whole file"
try:
    IntelHex(path)
    files = [path]
except Exception as e:
    files = split_universal(path)
    mode = "IntelHex(path) on the %d per-board plain hexes; it rejects the Universal Hex itself (%s)" % (len(files), type(e).__name__)
best = float("inf")
for _ in range(n):
    t = time.perf_counter()
    for p in files:
        IntelHex(p)
    best = min(best, time.perf_counter() - t)
for p in files:
    if p != path:
        os.unlink(p)
print(json.dumps({"best": best, "mode": mode, "version": ver}))
"""#

    // MARK: Helpers

    private func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }

    private func ms(_ s: Double) -> String { s < 1 ? "\(fmt(s * 1000)) ms" : "\(fmt(s)) s" }

    private func fmt(_ v: Double) -> String { String(format: v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v) }
}

/// Finds the shared firmware corpus from the command line: `BITFLASH_TESTDATA`, or `shared/testdata`
/// beside the repository (searched upwards from the working directory and from the executable).
enum CorpusLocator {
    static func directory() -> URL? {
        var candidates: [URL] = []
        if let env = ProcessInfo.processInfo.environment["BITFLASH_TESTDATA"] {
            candidates.append(URL(fileURLWithPath: env))
        }
        for start in [URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
                      URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()] {
            var dir = start
            for _ in 0..<6 {
                candidates.append(dir.appendingPathComponent("shared/testdata"))
                dir = dir.deletingLastPathComponent()
            }
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("analysis.json").path) }
    }

    /// The largest `.hex` in `real/` and `derived/` whose second record is a block start.
    static func largestUniversalHex(in corpus: URL) -> URL? {
        var best: (URL, Int)?
        for sub in ["real", "derived"] {
            let dir = corpus.appendingPathComponent(sub)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            for name in names where name.lowercased().hasSuffix(".hex") {
                let url = dir.appendingPathComponent(name)
                guard let handle = try? FileHandle(forReadingFrom: url) else { continue }
                let head = (try? handle.read(upToCount: 64)) ?? Data()
                try? handle.close()
                guard String(decoding: head, as: UTF8.self).contains(":0400000A") else { continue }
                let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
                if size > (best?.1 ?? -1) { best = (url, size) }
            }
        }
        return best?.0
    }
}

/// A Universal Hex about as large as the biggest real one (1.9 MB): V1 and V2 images laid out
/// like MicroPython builds, filled with deterministic pseudo-random bytes.
enum SyntheticUniversalHex {
    static func make() -> [UInt8] {
        var rng = SplitMix64(seed: 0xB17F_1A54)
        func image(_ runs: [(UInt32, UInt32)]) -> MemoryImage {
            var m = MemoryImage()
            for (start, end) in runs {
                var bytes = [UInt8](repeating: 0, count: Int(end - start))
                for k in bytes.indices { bytes[k] = UInt8(truncatingIfNeeded: rng.next()) }
                try? m.write(bytes, at: start)
            }
            return m
        }
        let v1 = image([(0x0, 0x7C0), (0x1000, 0x16918), (0x18000, 0x3886C), (0x3C000, 0x3F874), (0x1000_10C0, 0x1000_10DC)])
        let v2 = image([(0x0, 0xB00), (0x1000, 0x1B400), (0x1C000, 0x67A4C), (0x77000, 0x7D3EC),
                        (0x7E000, 0x7F323), (0x1000_1014, 0x1000_101C)])
        return UniversalHexWriter.write([.init(boardID: 0x9900, image: v1), .init(boardID: 0x9903, image: v2)])
    }
}
