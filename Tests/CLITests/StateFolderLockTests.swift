import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Testing
import TestSupport

/// Two runs on one folder of simulated boards: the second waits for the first, a bounded time,
/// and never starts from a board the first is still changing (a program lost with both
/// reporting success).
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct StateFolderLockTests {
    let state: URL
    init() throws { state = try BitflashBinary.temporaryDirectory() }

    /// Holds the folder's lock as a run of bitflash does (flock on `bitflash.lock`, process id inside).
    final class Holder {
        let fd: Int32
        init(_ folder: URL) throws {
            fd = open(folder.appendingPathComponent("bitflash.lock").path, O_RDWR | O_CREAT, 0o644)
            guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else { throw CocoaError(.fileLocking) }
            let pid = Array("\(getpid())\n".utf8)
            _ = pid.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
        func release() { close(fd) }
    }

    func flashArguments(_ sample: String = "sample-r1-counter.hex") -> [String] {
        ["flash", BitflashBinary.sample(sample).path, "--simulate", "--sim-state", state.path, "--json"]
    }

    @Test(
        "a run on a folder another run holds waits the bounded time, then exits 75 naming the holder; nothing changes")
    func busyFolderIsRefusedAfterTheWait() throws {
        let holder = try Holder(state)
        defer { holder.release() }
        for arguments in [flashArguments(), ["sim", "reset", "--sim-state", state.path]] {
            let r = try BitflashBinary.run(arguments + ["--sim-state-wait", "0.3"])
            #expect(r.status == 75, "\(arguments): exit \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("in use by another bitflash run (process \(getpid()))"), "\(r.stderr)")
            #expect(r.stderr.contains("waited 0.3 s") && r.stderr.contains("another --sim-state folder"), "\(r.stderr)")
            #expect(r.stdout.isEmpty, "\(arguments) ran: \(r.stdout)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: state.path)
        #expect(files == ["bitflash.lock"], "\(files)")
        holder.release()
        let free = try BitflashBinary.run(flashArguments())
        #expect(free.status == 0, "\(free.stderr)")
    }

    @Test("a run that waits goes on as soon as the holder lets go, and says it waited")
    func waitingRunGoesOnWhenReleased() async throws {
        let holder = try Holder(state)
        let run = try ExternalProcess(try #require(BitflashBinary.url), flashArguments() + ["--sim-state-wait", "600"])
        // Waits on the thread this test holds: an await would need a free thread of the shared pool,
        // which the suites' synchronous runs may hold for longer than the run waits (600 s).
        let waited = run.blockingWait(upTo: .seconds(120)) {
            $0.stderr.contains("waiting up to 600 s for another bitflash run") || !$0.isRunning
        }
        #expect(waited && run.isRunning, "\(run.stderr)")
        holder.release()
        let status = await run.finish(within: .seconds(120))
        #expect(status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains(#""path":"partial""#) || run.stdout.contains(#""path": "partial""#), "\(run.stdout)")
    }

    @Test(
        "two flashes of one program at once: one writes it, the other finds it already there; both succeed",
        arguments: 0..<4)
    func concurrentFlashesAreSerialised(attempt: Int) async throws {
        let reset = try BitflashBinary.run(["sim", "reset", "--sim-state", state.path])
        #expect(reset.status == 0, "\(reset.stderr)")
        let binary = try #require(BitflashBinary.url)
        let runs = try (0..<2).map { _ in try ExternalProcess(binary, flashArguments()) }
        var paths: [String] = []
        for run in runs {
            #expect(await run.finish(within: .seconds(300)) == 0, "\(run.stderr)")
            let result = run.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.first { $0["type"] as? String == "result" }
            paths.append(result?["path"] as? String ?? "none")
        }
        // Unserialised, both start from the factory program and both write the new one.
        #expect(paths.sorted() == ["partial", "up-to-date"], "attempt \(attempt): \(paths)")
    }
}
