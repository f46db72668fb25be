import Foundation
import Synchronization

/// Output collected from a child's pipes.
public final class Collected: Sendable {
    private let data = Mutex((out: Data(), err: Data()))
    public func withLock<R: Sendable>(_ body: (inout (out: Data, err: Data)) -> R) -> R { data.withLock { body(&$0) } }
}

/// A child process with its output collected, and every wait bounded.
public final class ExternalProcess: Sendable {
    private let process: Process
    private let output = Collected()

    /// Starts `executable` with `arguments`.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        let p = Process()
        p.executableURL = executable
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        process = p
        let output = self.output
        out.fileHandleForReading.readabilityHandler = { h in
            let d = h.availableData
            output.withLock { $0.out.append(d) }
        }
        err.fileHandleForReading.readabilityHandler = { h in
            let d = h.availableData
            output.withLock { $0.err.append(d) }
        }
        try p.run()
    }

    public var stdout: String { output.withLock { String(decoding: $0.out, as: UTF8.self) } }
    public var stderr: String { output.withLock { String(decoding: $0.err, as: UTF8.self) } }
    public var isRunning: Bool { process.isRunning }
    public var status: Int32 { process.terminationStatus }

    /// Waits until `condition` holds or `timeout` passes; true when it held.
    public func wait(upTo timeout: Duration, until condition: (ExternalProcess) -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: timeout)
        while clock.now < end {
            if condition(self) { return true }
            try? await clock.sleep(for: .milliseconds(20))
        }
        return condition(self)
    }

    /// Waits for the process to end (killing it after `timeout`); returns its status.
    @discardableResult
    public func finish(within timeout: Duration) async -> Int32 {
        if !(await wait(upTo: timeout) { !$0.isRunning }) {
            process.terminate()
            _ = await wait(upTo: .seconds(5)) { !$0.isRunning }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            _ = await wait(upTo: .seconds(2)) { !$0.isRunning }
        }
        // Let the pipes drain.
        try? await Task.sleep(for: .milliseconds(50))
        return process.isRunning ? -1 : process.terminationStatus
    }

    /// Asks the process to stop (SIGTERM) and waits for it.
    @discardableResult
    public func stop(within timeout: Duration) async -> Int32 {
        if process.isRunning { process.terminate() }
        return await finish(within: timeout)
    }

    /// Sends `signal` (SIGKILL, SIGTERM, SIGHUP…) to the process.
    public func send(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Sends SIGINT, as Ctrl-C in a terminal does.
    public func interrupt() {
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
    }

    /// Runs to the end and returns (status, stdout, stderr).
    public static func run(
        _ executable: URL, _ arguments: [String], timeout: Duration,
        environment: [String: String] = [:]
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let p = try ExternalProcess(executable, arguments, environment: environment)
        let status = await p.finish(within: timeout)
        return (status, p.stdout, p.stderr)
    }

    /// The first executable called `name` on PATH.
    public static func onPath(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The built `bitflash` binary (`BITFLASH_BIN`, else `.build/debug` or `.build/release`).
    public static let bitflash: URL? = {
        var candidates: [URL] = []
        if let env = ProcessInfo.processInfo.environment["BITFLASH_BIN"] {
            candidates.append(URL(fileURLWithPath: env))
        }
        candidates += ["debug", "release"].map { Corpus.repoRoot.appendingPathComponent(".build/\($0)/bitflash") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// The built `bitflash-lab` binary, the laboratory: beside `bitflash`.
    public static var bitflashLab: URL? {
        bitflash.map { $0.deletingLastPathComponent().appendingPathComponent("bitflash-lab") }
            .flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil }
    }
}
