import Foundation
import Synchronization

/// Output collected from a child's pipes.
public final class Collected: Sendable {
    private let data = Mutex((out: Data(), err: Data()))
    public func withLock<R: Sendable>(_ body: (inout (out: Data, err: Data)) -> R) -> R { data.withLock { body(&$0) } }
}

/// A count of changes (output arrived, a pipe closed, the child ended) and waits for the next.
final class Changes: Sendable {
    private struct State {
        var generation = 0
        var waiting: [UUID: CheckedContinuation<Void, Never>] = [:]
        var blocked: [DispatchSemaphore] = []
        var closedPipes = 0
    }
    private let state = Mutex(State())

    var generation: Int { state.withLock { $0.generation } }
    var closedPipes: Int { state.withLock { $0.closedPipes } }

    /// One of the child's pipes reached its end.
    func pipeClosed() {
        state.withLock { $0.closedPipes += 1 }
        signal()
    }

    func signal() {
        let (woken, blocked) = state.withLock { s in
            s.generation += 1
            defer { (s.waiting, s.blocked) = ([:], []) }
            return (Array(s.waiting.values), s.blocked)
        }
        for continuation in woken { continuation.resume() }
        for semaphore in blocked { semaphore.signal() }
    }

    /// As `next(after:deadline:)`, blocking the calling thread instead of awaiting.
    func blockingNext(after generation: Int, deadline: ContinuousClock.Instant) {
        let semaphore = DispatchSemaphore(value: 0)
        let now = state.withLock { s -> Bool in
            if s.generation != generation { return true }
            s.blocked.append(semaphore)
            return false
        }
        guard !now else { return }
        let left = max(.zero, ContinuousClock.now.duration(to: deadline))
        let nanoseconds = left.components.seconds * 1_000_000_000 + left.components.attoseconds / 1_000_000_000
        _ = semaphore.wait(timeout: .now() + .nanoseconds(Int(nanoseconds)))
    }

    /// Returns after the first change since `generation`, or at `deadline` (the bound that keeps a
    /// broken test from hanging), whichever comes first.
    func next(after generation: Int, deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.change(after: generation) }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
    }

    private func change(after generation: Int) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.generation != generation || Task.isCancelled { return true }
                    s.waiting[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.resume()
        }
    }
}

/// A child process with its output collected, and every wait bounded. Waits wake on what the
/// child does (output, closing its pipes, ending), never on a timer.
public final class ExternalProcess: Sendable {
    private let process: Process
    private let output = Collected()
    private let changes = Changes()

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
        let output = self.output, changes = self.changes
        out.fileHandleForReading.readabilityHandler = { h in
            let d = h.availableData
            guard !d.isEmpty else {
                h.readabilityHandler = nil
                changes.pipeClosed()
                return
            }
            output.withLock { $0.out.append(d) }
            changes.signal()
        }
        err.fileHandleForReading.readabilityHandler = { h in
            let d = h.availableData
            guard !d.isEmpty else {
                h.readabilityHandler = nil
                changes.pipeClosed()
                return
            }
            output.withLock { $0.err.append(d) }
            changes.signal()
        }
        p.terminationHandler = { _ in changes.signal() }
        try p.run()
    }

    public var stdout: String { output.withLock { String(decoding: $0.out, as: UTF8.self) } }
    public var stderr: String { output.withLock { String(decoding: $0.err, as: UTF8.self) } }
    public var isRunning: Bool { process.isRunning }
    public var status: Int32 { process.terminationStatus }

    /// Both pipes have reached their end: all the child wrote is in `stdout` and `stderr`.
    public var drained: Bool { changes.closedPipes == 2 }

    /// Waits until `condition` (of the child's output and state) holds, looking again each time
    /// the child writes, closes a pipe or ends; false when it still does not hold after `timeout`.
    public func wait(upTo timeout: Duration, until condition: (ExternalProcess) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let generation = changes.generation
            if condition(self) { return true }
            guard ContinuousClock.now < deadline else { return condition(self) }
            await changes.next(after: generation, deadline: deadline)
        }
    }

    /// As `wait(upTo:until:)`, blocking the calling thread: for a test that must not wait on the
    /// cooperative pool, which other suites' runs may hold.
    public func blockingWait(upTo timeout: Duration, until condition: (ExternalProcess) -> Bool) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let generation = changes.generation
            if condition(self) { return true }
            guard ContinuousClock.now < deadline else { return condition(self) }
            changes.blockingNext(after: generation, deadline: deadline)
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
        // All it wrote, to the pipes' end (a grandchild holding them open is given 5 s).
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
