import Foundation

/// What one poll sees of a file: enough to tell that it changed (rewritten in place, grown,
/// or replaced by a rename, which gives it another inode).
struct FileStamp: Equatable, Sendable {
    var size: Int64
    var modified: Double
    var inode: UInt64

    /// The stamp of the regular file at `path`, or nil (missing, a folder, unreadable).
    static func of(_ path: String) -> FileStamp? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileStamp(
            size: Int64(st.st_size),
            modified: Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9,
            inode: UInt64(st.st_ino))
    }
}

/// The decisions of `bitflash watch`, without I/O: which files changed, when a change has
/// settled, which settled file to flash. The command polls the file system and reads files;
/// this decides.
///
/// A file is flashed only when (1) its size, modification time and inode stayed the same for
/// the settle period, (2) it then parsed completely as firmware (the command checks that, and
/// that the file did not change while it was read), and (3) no other watched file is still
/// changing, unless that one has kept changing for `incompleteWait` (a download that never
/// ends does not hold back a complete one for ever). Of several files ready at once (two
/// downloads in quick succession), the newest by modification time is tried first; once it is
/// flashed, the older ones are passed over: they were superseded. A newer file the flash
/// refuses (firmware for another board) supersedes nothing: the older ones are tried next.
/// A settled file that does not parse is waited on; only when it stays unchanged and
/// unparsable for `incompleteWait` is it reported, once, and left until it changes again.
struct DownloadWatch {
    enum State: Equatable {
        /// Seen and dealt with (there at the start in a folder, flashed, passed over, reported).
        case handled
        /// Changed at `since`; waiting for it to settle and parse.
        case pending
        /// Settled but did not parse; reported when unchanged for `incompleteWait`.
        case incomplete(reason: String)
    }

    struct Tracked: Equatable {
        var stamp: FileStamp
        var changedAt: ContinuousClock.Instant
        /// When the changes that go on now began (the file had settled before, or was new).
        var changingSince: ContinuousClock.Instant
        var state: State
    }

    let settle: Duration
    let incompleteWait: Duration
    private(set) var files: [String: Tracked] = [:]

    init(settle: Duration, incompleteWait: Duration) {
        self.settle = settle
        self.incompleteWait = incompleteWait
    }

    /// Records what is there at the start: `existing` files are `handled` (a download folder's
    /// old files are not flashed), `flashNow` files are pending and settled already (a watched
    /// file is flashed once at the start).
    mutating func start(
        existing: [String: FileStamp], flashNow: [String: FileStamp], now: ContinuousClock.Instant
    ) {
        for (path, stamp) in existing {
            files[path] = Tracked(stamp: stamp, changedAt: now, changingSince: now, state: .handled)
        }
        for (path, stamp) in flashNow {
            files[path] = Tracked(
                stamp: stamp, changedAt: now - settle, changingSince: now - settle, state: .pending)
        }
    }

    /// Takes in one poll's stamps of every watched file; a file not in `seen` has gone. Returns
    /// the files that appeared or changed, in order of their paths.
    @discardableResult
    mutating func observe(_ seen: [String: FileStamp], now: ContinuousClock.Instant) -> [String] {
        for path in files.keys where seen[path] == nil { files[path] = nil }
        var changed: [String] = []
        for (path, stamp) in seen {
            if let old = files[path], old.stamp == stamp { continue }
            let since =
                files[path].flatMap { now - $0.changedAt < settle ? $0.changingSince : nil } ?? now
            files[path] = Tracked(stamp: stamp, changedAt: now, changingSince: since, state: .pending)
            changed.append(path)
        }
        return changed.sorted()
    }

    /// The files to try now, newest first: settled (pending or incomplete), unless some watched
    /// file is still changing, which may be a newer download still being written (a file that
    /// has kept changing for `incompleteWait` holds nothing back any more).
    func ready(now: ContinuousClock.Instant) -> [String] {
        let waiting = files.filter { $0.value.state != .handled }
        let changing = waiting.filter { now - $0.value.changedAt < settle }
        guard changing.allSatisfy({ now - $0.value.changingSince >= incompleteWait }) else { return [] }
        return waiting.filter { now - $0.value.changedAt >= settle }.sorted { a, b in
            a.value.stamp.modified != b.value.stamp.modified
                ? a.value.stamp.modified > b.value.stamp.modified : a.key > b.key
        }.map(\.key)
    }

    /// `path` parsed and is being flashed: it is handled (until it changes again).
    mutating func flashing(_ path: String) {
        files[path]?.state = .handled
    }

    /// `path` was flashed (the flash did not refuse the file): every older waiting file is
    /// handled, superseded by this newer one. Returns the superseded files.
    mutating func flashed(_ path: String) -> [String] {
        guard let chosen = files[path] else { return [] }
        var older: [String] = []
        for (other, t) in files
        where other != path && t.state != .handled && t.stamp.modified <= chosen.stamp.modified {
            files[other]?.state = .handled
            older.append(other)
        }
        return older.sorted()
    }

    /// `path` did not parse: it is waited on. Returns the reason when it has now been unchanged
    /// and unparsable for `incompleteWait` (it is then reported once and left until it changes).
    mutating func unparsable(_ path: String, reason: String, now: ContinuousClock.Instant) -> String? {
        guard let t = files[path] else { return nil }
        if now - t.changedAt >= incompleteWait {
            files[path]?.state = .handled
            return reason
        }
        files[path]?.state = .incomplete(reason: reason)
        return nil
    }

    /// `path` changed while it was read: it is pending again from `now`.
    mutating func changedWhileRead(_ path: String, stamp: FileStamp?, now: ContinuousClock.Instant) {
        guard let stamp else {
            files[path] = nil
            return
        }
        files[path] = Tracked(
            stamp: stamp, changedAt: now, changingSince: files[path]?.changingSince ?? now,
            state: .pending)
    }
}
