#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a path or a descriptor names, from `stat(2)`.
public struct FileStatus: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case regular, directory, symbolicLink, fifo, characterDevice, blockDevice, socket, other
    }

    public var kind: Kind
    public var size: Int64
    /// The permission bits (`0o7777`).
    public var permissions: mode_t
    public var device: UInt64
    public var inode: UInt64
    /// Seconds since 1970 of the last change of the contents.
    public var modified: Double

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        case S_IFSOCK: kind = .socket
        default: kind = .other
        }
        size = Int64(info.st_size)
        permissions = mode_t(info.st_mode & 0o7777)
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }

    /// True when both name the same file (device and inode).
    public func isSameFile(as other: FileStatus) -> Bool { device == other.device && inode == other.inode }

    /// What `path` names, links followed (`stat`) or not (`lstat`).
    public static func of(_ path: String, followingLinks: Bool = true) throws(SystemError) -> FileStatus {
        var info = stat()
        let result = followingLinks ? stat(path, &info) : lstat(path, &info)
        guard result == 0 else { throw SystemError.last }
        return FileStatus(info)
    }
}

/// Calls on paths.
public enum SystemPaths {
    /// Where the symbolic link `path` points, as written in the link; nil when it is no link.
    public static func linkTarget(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = buffer.withUnsafeMutableBytes {
            readlink(path, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count - 1)
        }
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    /// A new file `prefix` + six random characters, created exclusively (`mkstemp`), open for
    /// writing; and its path.
    public static func makeTemporary(prefix: String) throws(SystemError) -> (file: SystemFile, path: String) {
        var template = Array((prefix + "XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw SystemError.last }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (SystemFile(adopting: fd), path)
    }

    public static func rename(_ from: String, to: String) throws(SystemError) {
        guard systemRename(from, to) == 0 else { throw SystemError.last }
    }

    public static func remove(_ path: String) { unlink(path) }

    /// The process's file-creation mask.
    public static var umask: mode_t {
        let mask = systemUmask(0o022)
        _ = systemUmask(mask)
        return mask
    }

    /// A file-size limit (`ulimit -f`) would otherwise kill the process (SIGXFSZ) before a
    /// write could fail with EFBIG.
    public static func ignoreFileSizeSignal() { signal(SIGXFSZ, SIG_IGN) }

    /// A reader that went away (`bitflash flash … | head -1`) would otherwise kill the process
    /// (SIGPIPE) in the middle of a flash; ignored, the write fails with EPIPE instead, and the
    /// flash goes on.
    public static func ignoreBrokenPipeSignal() { signal(SIGPIPE, SIG_IGN) }
}

// The C calls, under names the members above do not shadow.
private func systemRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
private func systemUmask(_ mask: mode_t) -> mode_t { umask(mask) }
