import Diagnostics
import Foundation
import SystemFiles

/// One run's hold on a folder of simulated boards and their resume records. A flash loads a
/// board, changes it and saves it: two runs on one folder at once would each start from the
/// same board, both report success, and the later save would drop the earlier program. Every
/// command that loads a board and saves it later holds an exclusive `flock(2)` on
/// `bitflash.lock` in the folder from before it loads the boards until after it saved them and
/// their resume records: a flash, `sim reset`, and the servers (`sim serve`, `sim bluez`) for
/// their whole run. A second run waits for it, up to a bound, then refuses (75: the folder is
/// busy now, and will be free later).
///
/// The kernel releases the lock when the holder exits, however it ends (a killed run leaves
/// no stale lock). The file holds the holder's process id, for the message only. A lock file
/// that is a symbolic link (or anything but a regular file) is refused, never followed: the
/// process id would otherwise be written over the file the link names.
final class StateFolderLock {
    /// The lock file's name; not a board's (`.json`), so `sim show` and `sim reset` pass it by.
    static let fileName = "bitflash.lock"

    private let file: SystemFile

    private init(file: SystemFile) { self.file = file }

    /// Takes the lock of `directory` (created if missing), waiting up to `wait` for the run that
    /// holds it; `waiting` is told once, when the wait begins.
    /// - Throws: `CLIError(.temporarilyUnavailable)` when another run still holds it after
    ///   `wait`; `CLIError(.cannotWrite)` when the folder or its lock file cannot be made, or the
    ///   lock file is a link or not a regular file.
    static func acquire(_ directory: URL, wait: Duration, waiting: (String) -> Void = { _ in }) throws
        -> StateFolderLock
    {
        let path = directory.appendingPathComponent(fileName).path
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CLIError(
                .cannotWrite,
                "cannot use \(directory.path) for the simulated boards: \(FoundationErrorText.describe(error))")
        }
        let file: SystemFile
        do {
            file = try SystemFile.open(path, flags: O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK)
            guard try file.status().kind == .regular else { throw SystemError(EINVAL) }
        } catch {
            throw Self.refusal(path, (error as? SystemError)?.code ?? EIO, directory: directory)
        }
        let lock = StateFolderLock(file: file)
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        var told = false
        while true {
            do {
                if try file.tryLockExclusive() { break }
            } catch {
                throw CLIError(.cannotWrite, "cannot lock \(directory.path) for this run: \(error)")
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
                    "waiting up to \(Self.seconds(wait)) for another bitflash run\(holder) that uses \(directory.path)"
                )
                told = true
            }
            usleep(50_000)
        }
        try? file.replaceContents(with: Array("\(getpid())\n".utf8))
        return lock
    }

    /// Takes the lock of `directory` for a command, waiting up to `seconds` (its
    /// `--sim-state-wait`) and saying so on standard error when it waits.
    static func hold(_ directory: URL, waitSeconds seconds: Double) throws -> StateFolderLock {
        try acquire(directory, wait: .milliseconds(Int64((seconds * 1000).rounded()))) {
            StdErr.write("bitflash: note: \($0)\n")
        }
    }

    /// Why the lock file cannot be used, in words.
    private static func refusal(_ path: String, _ code: Int32, directory: URL) -> CLIError {
        var status: FileStatus?
        do { status = try FileStatus.of(path, followingLinks: false) } catch {}
        if code == ELOOP || status?.kind == .symbolicLink {
            let target = SystemPaths.linkTarget(path).map { " to \($0)" } ?? ""
            return CLIError(
                .cannotWrite,
                "\(path) is a symbolic link\(target): bitflash does not follow it (it would write over the file it "
                    + "names); remove the link, and bitflash makes the lock file itself")
        }
        if let status, status.kind != .regular {
            return CLIError(
                .cannotWrite,
                "\(path) is not a regular file: remove it, and bitflash makes the lock file itself")
        }
        return CLIError(
            .cannotWrite,
            "cannot lock \(directory.path) for this run: \(path): \(String(describing: SystemError(code)))"
        )
    }

    /// The process id the holder wrote, if the file holds one.
    private func holder() -> Int? {
        guard let bytes = file.read(at: 0, maximum: 32), !bytes.isEmpty else { return nil }
        return Int(
            String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private static func seconds(_ d: Duration) -> String {
        let s = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        return s == s.rounded() ? "\(Int(s)) s" : String(format: "%.1f s", s)
    }
}
