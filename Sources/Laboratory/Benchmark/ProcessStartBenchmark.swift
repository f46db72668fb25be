import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The whole-process comparison of `bitflash-lab bench parse --processes N`: N runs of
/// `bitflash inspect FILE` as a child process against N runs of a python3 process that parses
/// the same file with `intelhex`, interleaved so that both meet the same load. Each child's wall
/// time is taken around its start and its exit; its CPU time (user + system) from
/// `getrusage(RUSAGE_CHILDREN)` before and after it is reaped.
public enum ProcessStartBenchmark {
    /// The figures of one side: the median wall time and the median CPU time of its processes.
    public struct Side: Sendable, Equatable {
        public var runs: Int
        public var medianWall: Double
        public var medianCPU: Double
    }

    /// Both sides on one file.
    public struct Comparison: Sendable, Equatable {
        public var bitflash: Side
        public var intelhex: Side
        /// intelhex's median over bitflash's: how many times as fast the whole process is.
        public var wallRatio: Double { intelhex.medianWall / bitflash.medianWall }
        public var cpuRatio: Double { intelhex.medianCPU / bitflash.medianCPU }
    }

    /// Why a side did not run, or failed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ d: String) { description = d }
    }

    /// Runs `bitflash inspect path` and the intelhex peer `runs` times each, alternately.
    /// `intelhexFiles` are the files the peer parses (the file itself, or a Universal Hex's
    /// per-board plain hexes: `splitForIntelHex`).
    public static func compare(bitflash: String, path: String, intelhexFiles: [String], runs: Int) -> Result<
        Comparison, Failure
    > {
        let ours = [bitflash, "inspect", path]
        let peer = ["/usr/bin/env", "python3", "-c", peerScript] + intelhexFiles
        var oursWall: [Double] = [], oursCPU: [Double] = []
        var peerWall: [Double] = [], peerCPU: [Double] = []
        for _ in 0..<runs {
            switch (runChild(ours), runChild(peer)) {
            case (.success(let a), .success(let b)):
                oursWall.append(a.wall)
                oursCPU.append(a.cpu)
                peerWall.append(b.wall)
                peerCPU.append(b.cpu)
            case (.failure(let f), _):
                return .failure(Failure("bitflash inspect failed: \(f)"))
            case (_, .failure(let f)):
                return .failure(Failure("python3 intelhex failed: \(f)"))
            }
        }
        return .success(
            Comparison(
                bitflash: Side(runs: runs, medianWall: median(oursWall), medianCPU: median(oursCPU)),
                intelhex: Side(runs: runs, medianWall: median(peerWall), medianCPU: median(peerCPU))))
    }

    /// The files intelhex is given for `path`: the file itself when `IntelHex(path)` reads it, else
    /// (a Universal Hex, whose block records it rejects) its per-board plain hexes, written to
    /// temporary files the caller removes. The split runs once, before any timing.
    public static func splitForIntelHex(path: String) -> Result<(files: [String], split: Bool), Failure> {
        let script = """
            import sys, json, os, tempfile
            from intelhex import IntelHex
            \(ParserBenchmark.splitUniversal)
            try:
                IntelHex(sys.argv[1])
                print(json.dumps([sys.argv[1]]))
            except Exception:
                print(json.dumps(split_universal(sys.argv[1])))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return .failure(Failure("python3 not found: \(error)")) }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let files = try? JSONDecoder().decode([String].self, from: data),
            !files.isEmpty
        else { return .failure(Failure("python3 with intelhex could not read \(path)")) }
        return .success((files, files != [path]))
    }

    /// The peer: `intelhex.IntelHex(path)` on each argument, nothing else.
    public static let peerScript = "import intelhex,sys\nfor p in sys.argv[1:]: intelhex.IntelHex(p)"

    /// The wall and CPU seconds of one child run to its end with its output discarded; a
    /// failure when it cannot start or exits with a status other than 0.
    static func runChild(_ arguments: [String]) -> Result<(wall: Double, cpu: Double), Failure> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let cpuBefore = childrenCPU()
        let clock = ContinuousClock()
        let start = clock.now
        do { try process.run() } catch { return .failure(Failure("cannot start \(arguments[0]): \(error)")) }
        process.waitUntilExit()
        let wall = ParserBenchmark.seconds(clock.now - start)
        guard process.terminationStatus == 0 else {
            return .failure(Failure("\(arguments[0]) exited with \(process.terminationStatus)"))
        }
        return .success((wall, childrenCPU() - cpuBefore))
    }

    /// User and system seconds of every child reaped so far.
    static func childrenCPU() -> Double {
        var usage = rusage()
        #if os(Linux)
            getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        #else
            getrusage(RUSAGE_CHILDREN, &usage)
        #endif
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
