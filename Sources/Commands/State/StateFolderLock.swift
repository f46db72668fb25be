import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One run's hold on a folder of simulated boards and their resume records. A flash loads a
/// board, changes it and saves it: two runs on one folder at once would each start from the
/// same board, both report success, and the later save would drop the earlier program. The
/// run holds an exclusive `flock(2)` on `bitflash.lock` in the folder from before it loads the
/// boards until after it saved them and their resume records; a second run waits for it, up to
/// a bound, then refuses (75: the folder is busy now, and will be free later).
///
/// The kernel releases the lock when the holder exits, however it ends (a killed run leaves
/// no stale lock). The file holds the holder's process id, for the message only.
final class StateFolderLock {
    /// The lock file's name; not a board's (`.json`), so `sim show` and `sim reset` pass it by.
    static let fileName = "bitflash.lock"

    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// Takes the lock of `directory` (created if missing), waiting up to `wait` for the run that
    /// holds it; `waiting` is told once, when the wait begins.
    /// - Throws: `CLIError(.temporarilyUnavailable)` when another run still holds it after
    ///   `wait`; `CLIError(.cannotWrite)` when the folder or its lock file cannot be made.
    static func acquire(_ directory: URL, wait: Duration, waiting: (String) -> Void = { _ in }) throws
        -> StateFolderLock
    {
        let path = directory.appendingPathComponent(fileName).path
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CLIError(
                .cannotWrite, "cannot use \(directory.path) for the simulated boards: \(error.localizedDescription)")
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CLIError(
                .cannotWrite, "cannot lock \(directory.path) for this run: \(path): \(String(cString: strerror(errno)))"
            )
        }
        let lock = StateFolderLock(descriptor: fd)
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        var told = false
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            guard failure == EWOULDBLOCK || failure == EINTR else {
                throw CLIError(
                    .cannotWrite, "cannot lock \(directory.path) for this run: \(String(cString: strerror(failure)))")
            }
            let holder = lock.holder().map { " (process \($0))" } ?? ""
            guard clock.now < deadline else {
                throw CLIError(
                    .temporarilyUnavailable,
                    "the simulated boards in \(directory.path) are in use by another bitflash run\(holder); "
                        + "waited \(Self.seconds(wait)): run again once it has finished, or use another --sim-state folder"
                )
            }
            if !told {
                waiting(
                    "waiting up to \(Self.seconds(wait)) for another bitflash run\(holder) that uses \(directory.path)")
                told = true
            }
            usleep(50_000)
        }
        lock.recordHolder()
        return lock
    }

    /// The process id the holder wrote, if the file holds one.
    private func holder() -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = pread(descriptor, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return Int(String(decoding: buffer[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private func recordHolder() {
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    private static func seconds(_ d: Duration) -> String {
        let s = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        return s == s.rounded() ? "\(Int(s)) s" : String(format: "%.1f s", s)
    }
}
