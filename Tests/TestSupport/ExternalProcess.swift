import Foundation

/// A child process with its output collected, and every wait bounded. Waits wake on what the
/// child does (a piece of output, a pipe reaching its end, its end), never on a timer; the bound
/// of a wait only decides when a broken test gives up.
public final class ExternalProcess: Sendable {
    private let process: Process
    private let pipes: (out: Pipe, err: Pipe)
    private let events = ChildEvents()

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
        pipes = (out, err)
        let events = self.events
        // Foundation starts this thread just before it marks the child ended, so the thread waits
        // for that mark (the next statement of Foundation's monitor) before it announces the end:
        // a wait woken earlier would still see the child running and sleep through the end.
        p.terminationHandler = { ended in
            ended.waitUntilExit()
            events.childEnded()
        }
        try p.run()
        events.startReading(out.fileHandleForReading, onStandardError: false)
        events.startReading(err.fileHandleForReading, onStandardError: true)
    }

    public var stdout: String { String(decoding: events.stdout, as: UTF8.self) }
    public var stderr: String { String(decoding: events.stderr, as: UTF8.self) }
    public var isRunning: Bool { process.isRunning }
    public var status: Int32 { process.terminationStatus }

    /// Both pipes have reached their end: all the child wrote is in `stdout` and `stderr`.
    public var drained: Bool { events.drained }

    /// Waits until `condition` (of the child's output and state) holds, looking again each time
    /// the child writes, closes a pipe or ends; false when it still does not hold after `timeout`.
    public func wait(upTo timeout: Duration, until condition: (ExternalProcess) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let seen = events.changes
            if condition(self) { return true }
            guard ContinuousClock.now < deadline else { return condition(self) }
            await events.next(after: seen, deadline: deadline)
        }
    }

    /// As `wait(upTo:until:)`, blocking the calling thread: for a test that looks at the output
    /// while it holds its thread.
    public func blockingWait(upTo timeout: Duration, until condition: (ExternalProcess) -> Bool) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let seen = events.changes
            if condition(self) { return true }
            guard ContinuousClock.now < deadline else { return condition(self) }
            events.blockingNext(after: seen, deadline: deadline)
        }
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
        // All it wrote, to the pipes' end (a grandchild that holds them open is given 5 s).
        _ = await wait(upTo: .seconds(5)) { $0.drained }
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
