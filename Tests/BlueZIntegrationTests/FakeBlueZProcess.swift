import Foundation
import SimulatedBoard
import TestSupport

/// The built `bitflash`, run with the system bus pointed at a private bus.
enum Bitflash {
    static var url: URL? { BitflashBinary.url }
    /// The laboratory, `bitflash-lab`, which plays the fake BlueZ (`sim bluez`).
    static var labURL: URL? { BitflashBinary.labURL }

    /// Whether these tests can run, and if not, why (shown as the skip reason).
    static var available: Bool { url != nil && labURL != nil && PrivateBus.isAvailable }

    typealias Result = BitflashBinary.Result

    /// Runs bitflash to completion with the system bus pointed at `bus`.
    static func run(_ arguments: [String], bus: String) throws -> Result {
        try BitflashBinary.run(arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus])
    }

    /// The same run, on a thread of its own: waiting for the child must not hold one of the few
    /// threads the tests' async code (and the D-Bus replies of in-process fakes beside it) runs on.
    static func runAsync(_ arguments: [String], bus: String) async throws -> Result {
        try await FakeBlueZProcess.offPool { try run(arguments, bus: bus) }
    }

    /// `BitflashBinary.run` (or `.lab` when `lab`), on a thread of its own.
    static func offPoolRun(lab: Bool = false, _ arguments: [String], environment: [String: String] = [:])
        async throws -> Result
    {
        try await FakeBlueZProcess.offPool {
            try (lab ? BitflashBinary.lab : BitflashBinary.run)(arguments, environment)
        }
    }

    /// Writes the sample firmware files (`bitflash-lab sim samples`) once per test run.
    static let samples: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bitflash-bluez-samples-\(UUID().uuidString)")
        _ = try? BitflashBinary.lab(["sim", "samples", dir.path])
        return dir
    }()
}

/// `bitflash-lab sim bluez` on a private bus: a fake org.bluez with one simulated board, stopped
/// (and its board saved) by `stop()` or on deinit.
final class FakeBlueZProcess: @unchecked Sendable {
    static let address = "F0:0D:00:00:00:01"
    static let name = "BBC micro:bit [zotig]"

    let bus: PrivateBus
    let state: URL
    private let process = Process()
    private let output = Pipe()

    /// Starts the fake with the board options `options` and waits for its readiness line.
    /// `prepare` runs first with the state folder (to put a board there, e.g. with `sim reset`).
    convenience init(
        _ options: [String] = [], profile: String = "microbit-v2-mcuboot", name: String = FakeBlueZProcess.name,
        prepare: (URL) throws -> Void = { _ in }
    ) throws {
        try self.init(
            arguments: ["--name", name, "--address", Self.address, "--profile", profile] + options, prepare: prepare)
    }

    /// Starts the fake with the boards of a scenario (JSON text); `prepare` may first put
    /// boards into the state folder (with `sim reset`).
    convenience init(scenario: String, prepare: (URL) throws -> Void = { _ in }) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bitflash-scenario-\(UUID().uuidString).json")
        try scenario.write(to: file, atomically: true, encoding: .utf8)
        try self.init(arguments: ["--scenario", file.path], prepare: prepare)
    }

    init(arguments options: [String], prepare: (URL) throws -> Void = { _ in }) throws {
        bus = try PrivateBus()
        state = bus.directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try prepare(state)
        process.executableURL = Bitflash.labURL
        process.arguments = ["sim", "bluez", "--sim-state", state.path] + options
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        process.environment = env
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("fake org.bluez ready") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                throw BusFixtureError.gaveUpWaiting(
                    "the fake org.bluez exited: \(String(decoding: seen, as: UTF8.self))")
            }
            seen.append(chunk)
        }
        // Keep reading its output so that it never blocks on a full pipe (the notes of `-v` are kept).
        let log = self.log
        log.append(seen)
        output.fileHandleForReading.readabilityHandler = { handle in log.append(handle.availableData) }
    }

    /// Everything the fake printed so far (its board notes with `-v`; after `stop()`, each
    /// board's traffic line).
    var printed: String { log.text }

    /// The numbers of the fake's traffic line for the first board, after `stop()`:
    /// `writes: A through AcquireWrite sockets (B granted), C through WriteValue; notifications:
    /// D through AcquireNotify sockets (E granted), F as PropertiesChanged`.
    var traffic: [Int]? {
        guard let line = printed.split(separator: "\n").first(where: { $0.contains("through AcquireWrite sockets") })
        else { return nil }
        return line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }.suffix(6)
    }

    private let log = Log()

    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func append(_ chunk: Data) { lock.withLock { data.append(chunk) } }
        var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
    }

    /// Runs bitflash against this fake.
    func bitflash(_ arguments: [String]) throws -> Bitflash.Result {
        try Bitflash.run(arguments, bus: bus.address)
    }

    /// Runs bitflash against this fake from an async test, on a thread of its own: waiting for
    /// the child must not hold one of the few threads the tests' async code (and the D-Bus
    /// replies of the suites running beside it) runs on.
    func bitflashAsync(_ arguments: [String]) async throws -> Bitflash.Result {
        let address = bus.address
        return try await Self.offPool { try Bitflash.run(arguments, bus: address) }
    }

    /// Runs `body` on a thread of its own.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// The first board's state file, saved whenever its link drops and whenever it boots.
    var stateFile: URL { state.appendingPathComponent("sim.json") }

    /// Waits until the saved board satisfies `condition` (the fake saves it at every boot), for
    /// at most `limit`, a bound that only keeps a broken test from hanging. It looks again each
    /// time a file in the state folder is written or moved in (inotify), on a thread of its own.
    func waitForBoard(limit: Duration = .seconds(30), _ condition: @escaping @Sendable (SimulatedBoard) -> Bool)
        async throws -> SimulatedBoard
    {
        let watch = try FolderWatch(state)
        let file = stateFile
        let deadline = ContinuousClock.now + limit
        let board = try await Self.offPool { () -> SimulatedBoard? in
            while true {
                if let board = try? SimulatedBoard.load(from: file), condition(board) { return board }
                guard watch.next(before: deadline) else { return nil }
            }
        }
        guard let board else { throw BusFixtureError.gaveUpWaiting("the board's saved state") }
        return board
    }

    /// Stops the fake (it saves its boards) and returns the first board's state file.
    @discardableResult
    func stop() -> URL {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        if output.fileHandleForReading.readabilityHandler != nil {
            output.fileHandleForReading.readabilityHandler = nil
            log.append(output.fileHandleForReading.readDataToEndOfFile())
        }
        return state.appendingPathComponent("sim.json")
    }

    deinit { stop() }
}
