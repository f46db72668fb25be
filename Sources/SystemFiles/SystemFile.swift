#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed system call: its `errno`.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    public init(_ code: Int32) { self.code = code }
    /// The C library's words for it, such as `No such file or directory`.
    public var description: String { String(cString: strerror(code)) }
    /// The error of the call that just failed.
    static var last: SystemError { SystemError(errno) }
}

/// An open file descriptor, closed when the last reference goes (or by `close()`). The POSIX
/// calls on files that the command line needs, in the one module (with DBus) whose code may
/// hold unsafe pointers: everything here hands out bytes and values, never a pointer.
public final class SystemFile {
    public let descriptor: Int32
    private var isClosed = false

    /// Takes over `descriptor`: it is closed with this value.
    public init(adopting descriptor: Int32) { self.descriptor = descriptor }

    deinit { if !isClosed { _ = systemClose(descriptor) } }

    /// A new descriptor for what `descriptor` (one this process holds open) names, at the same
    /// offset: closing it leaves `descriptor` open.
    public static func duplicate(_ descriptor: Int32) throws(SystemError) -> SystemFile {
        let fd = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { throw SystemError.last }
        return SystemFile(adopting: fd)
    }

    /// Opens `path` with `flags` (`O_CLOEXEC` is always added); `mode` for a file it creates.
    public static func open(_ path: String, flags: Int32, mode: mode_t = 0o644) throws(SystemError) -> SystemFile {
        let fd = systemOpen(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SystemError.last }
        return SystemFile(adopting: fd)
    }

    /// Up to `maximum` bytes from the current offset; empty at the end. Retries on EINTR.
    public func read(maximum: Int) throws(SystemError) -> [UInt8] {
        let count = max(1, maximum)
        while true {
            // Read straight into the array's storage: no zeroing first of what read overwrites.
            var n = 0
            let buffer = [UInt8](unsafeUninitializedCapacity: count) { storage, initialized in
                n = systemRead(descriptor, storage.baseAddress, count)
                initialized = max(0, n)
            }
            if n >= 0 { return buffer }
            if errno != EINTR { throw SystemError.last }
        }
    }

    /// Writes every byte of `bytes` from the current offset. Retries on EINTR and short writes.
    public func writeAll(_ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError.last
            }
            offset += n
        }
    }

    /// Up to `maximum` bytes at `offset`, without moving the file offset; nil when the call fails.
    public func read(at offset: Int, maximum: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max(1, maximum))
        let n = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
        guard n >= 0 else { return nil }
        return Array(buffer[..<n])
    }

    /// Makes the file `bytes` and nothing else (truncates, then writes at offset 0).
    public func replaceContents(with bytes: [UInt8]) throws(SystemError) {
        guard ftruncate(descriptor, 0) == 0 else { throw SystemError.last }
        let n = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard n == bytes.count else { throw n < 0 ? SystemError.last : SystemError(EIO) }
    }

    /// Back to the first byte.
    public func rewind() throws(SystemError) {
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { throw SystemError.last }
    }

    /// An exclusive `flock(2)` without waiting: true when taken, false while another holds it.
    public func tryLockExclusive() throws(SystemError) -> Bool {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        let failure = errno
        if failure == EWOULDBLOCK || failure == EINTR { return false }
        throw SystemError(failure)
    }

    /// What the descriptor names (`fstat`).
    public func status() throws(SystemError) -> FileStatus {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemError.last }
        return FileStatus(info)
    }

    /// Flushes to the disk (a device that cannot be flushed, EINVAL, is not a failure).
    public func sync() throws(SystemError) {
        if fsync(descriptor) != 0, errno != EINVAL { throw SystemError.last }
    }

    public func setPermissions(_ mode: mode_t) throws(SystemError) {
        guard fchmod(descriptor, mode) == 0 else { throw SystemError.last }
    }

    /// Closes now, reporting a failure (a delayed write error of NFS, say).
    public func close() throws(SystemError) {
        guard !isClosed else { return }
        isClosed = true
        guard systemClose(descriptor) == 0 else { throw SystemError.last }
    }
}

// The C calls, under names the methods above do not shadow.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
