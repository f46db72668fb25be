import FirmwareImage
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The parser benchmark of `bitflash-lab bench parse`: the firmware parser's time on one file, and
/// Python `intelhex` timed on the same file in a python3 subprocess.
public enum ParserBenchmark {
    /// The best and the median time of `iterations` parses of `bytes`, in seconds.
    public static func timeParses(_ bytes: [UInt8], name: String, iterations: Int) throws -> (
        best: Double, median: Double
    ) {
        var times: [Double] = []
        var sink = 0
        let clock = ContinuousClock()
        for _ in 0..<iterations {
            var parsed: Firmware?
            let d = try clock.measure { parsed = try Firmware.parse(bytes, fileName: name) }
            sink &+= parsed?.sections.count ?? 0
            times.append(seconds(d))
        }
        times.sort()
        precondition(sink >= 0, "the parses are kept, so that the optimiser cannot drop them")
        return (times[0], times[times.count / 2])
    }

    /// Writes `bytes` to a temporary file for intelhex; nil when it cannot.
    public static func writeTemporary(_ bytes: [UInt8], name: String) -> String? {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-bench-\(getpid())-\(name)")
        do { try Data(bytes).write(to: url) } catch { return nil }
        return url.path
    }

    // MARK: Python intelhex

    /// What intelhex took: the best time of its loads, how it read the file, its version.
    public struct IntelHexResult: Sendable {
        public var best: Double
        public var mode: String
        public var version: String
    }

    /// Times `IntelHex(path)` `iterations` times in python3; the failure says why it did not run.
    public static func runIntelHex(path: String, iterations: Int) -> Result<IntelHexResult, Failure> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.pythonScript, path, String(iterations)]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { return .failure(Failure("python3 not found: \(error)")) }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            let message =
                String(decoding: errData, as: UTF8.self).split(separator: "\n").last.map(String.init)
                ?? "exit \(process.terminationStatus)"
            return .failure(Failure("python3 failed: \(message)"))
        }
        if let error = object["error"] as? String { return .failure(Failure(error)) }
        guard let best = object["best"] as? Double else { return .failure(Failure("python3 printed no timing")) }
        return .success(
            IntelHexResult(
                best: best, mode: object["mode"] as? String ?? "",
                version: object["version"] as? String ?? "?"))
    }

    /// Why intelhex was not run.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
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

        \#(splitUniversal)

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

    /// `split_universal(path)`: writes a Universal Hex's per-board plain hexes (0D records become
    /// 00, block records are dropped) to temporary files and returns their paths.
    static let splitUniversal = #"""
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
        """#

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
}

/// Finds the shared firmware corpus: `BITFLASH_TESTDATA`, or `shared/testdata`
/// beside the repository (searched upwards from the working directory and from the executable).
public enum CorpusLocator {
    public static func directory() -> URL? {
        var candidates: [URL] = []
        if let env = ProcessInfo.processInfo.environment["BITFLASH_TESTDATA"] {
            candidates.append(URL(fileURLWithPath: env))
        }
        for start in [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        ] {
            var dir = start
            for _ in 0..<6 {
                candidates.append(dir.appendingPathComponent("shared/testdata"))
                dir = dir.deletingLastPathComponent()
            }
        }
        return candidates.first {
            FileManager.default.fileExists(atPath: $0.appendingPathComponent("analysis.json").path)
        }
    }

    /// The largest `.hex` in `real/` and `derived/` whose second record is a block start.
    public static func largestUniversalHex(in corpus: URL) -> URL? {
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
public enum SyntheticUniversalHex {
    public static func make() -> [UInt8] {
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
        let v1 = image([
            (0x0, 0x7C0), (0x1000, 0x16918), (0x18000, 0x3886C), (0x3C000, 0x3F874), (0x1000_10C0, 0x1000_10DC)
        ])
        let v2 = image([
            (0x0, 0xB00), (0x1000, 0x1B400), (0x1C000, 0x67A4C), (0x77000, 0x7D3EC),
            (0x7E000, 0x7F323), (0x1000_1014, 0x1000_101C)
        ])
        return UniversalHexWriter.write([.init(boardID: 0x9900, image: v1), .init(boardID: 0x9903, image: v2)])
    }
}
