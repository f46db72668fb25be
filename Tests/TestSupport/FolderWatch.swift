import Foundation

/// Changes in one folder (a file created, written and closed, or moved in), read with inotify: a
/// wait that wakes when something in the folder changes, not on a timer. Events that happen
/// between the watch's start and a wait are queued by the kernel, so none is missed.
public final class FolderWatch: @unchecked Sendable {  // one waiter at a time; the fd never changes
    private let fd: Int32

    public struct Failed: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts watching `folder` (it must exist).
    public init(_ folder: URL) throws {
        fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0 else { throw Failed(description: "inotify_init1: \(String(cString: strerror(errno)))") }
        let mask = UInt32(IN_CREATE) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO)
        guard inotify_add_watch(fd, folder.path, mask) >= 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failed(description: "cannot watch \(folder.path): \(reason)")
        }
    }

    deinit { close(fd) }

    /// Blocks the calling thread until something in the folder changes (true), or until
    /// `deadline` (false), a bound that only keeps a broken test from hanging.
    public func next(before deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, Int32(clamping: max(1, milliseconds)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return false }
            var events = [UInt8](repeating: 0, count: 4096)
            _ = read(fd, &events, events.count)
            return true
        }
    }
}
