import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing an output file so that a failure never costs what was there before: the one way every
/// command writes a file (converted firmware, traces, samples, benchmark reports).
///
/// * A regular file (or a new one) is written to a temporary file beside it, flushed to the disk,
///   given the old file's permissions (a new file gets 0666 less the umask), and renamed over the
///   target only then. A full disk, a file-size limit (`ulimit -f`) or any other failure removes
///   the temporary file and leaves the old one as it was.
/// * A symbolic link is followed: the file it names is replaced, the link stays.
/// * Anything else that can be written (a FIFO, `/dev/null`, `/dev/full`, a terminal) is written
///   in place, never replaced by a regular file. A directory is refused.
/// * `inputs` are files the command reads: an output that is one of them (by name, through a
///   link, or as another hard link to the same file) is refused before anything is written.
enum OutputFile {
    /// Writes `bytes` to `path`; `what` names the file in messages ("the trace").
    /// - Throws: `CLIError(.usage)` when `path` is one of `inputs`; `CLIError(.cannotWrite)` otherwise.
    static func write(_ bytes: [UInt8], to path: String, what: String = "the file", inputs: [String] = []) throws {
        ignoreFileSizeSignal()
        try refuseInputs(path, inputs: inputs, what: what)
        let target = resolve(path)
        var info = stat()
        let exists = stat(target, &info) == 0
        if exists, info.st_mode & S_IFMT == S_IFDIR {
            throw CLIError(.cannotWrite, "\(path): cannot write \(what): it is a directory; give a file name")
        }
        if exists, info.st_mode & S_IFMT != S_IFREG {
            try writeInPlace(bytes, to: target, shownAs: path, what: what)
            return
        }
        try replace(
            target, with: bytes, mode: exists ? mode_t(info.st_mode & 0o7777) : nil, shownAs: path, what: what,
            hadFile: exists)
    }

    /// Refuses an output that is one of the `inputs` (by name, through a symbolic link, or as
    /// another hard link to the same file).
    /// - Throws: `CLIError(.usage)`.
    static func refuseInputs(_ path: String, inputs: [String], what: String) throws {
        var info = stat()
        guard !inputs.isEmpty, stat(path, &info) == 0 else { return }
        for input in inputs {
            var other = stat()
            if stat(input, &other) == 0, other.st_dev == info.st_dev, other.st_ino == info.st_ino {
                throw CLIError(
                    .usage,
                    "\(path) is the same file as the input \(input): writing \(what) there "
                        + "would destroy the file being read; choose another output file")
            }
        }
    }

    /// The file a path names once symbolic links are followed (the path itself when it names
    /// nothing yet; a dangling link names the file it points to).
    static func resolve(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, buffer.count - 1)
            guard n > 0 else { return current }
            let link = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current =
                link.hasPrefix("/")
                ? link : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(link)
        }
        return current
    }

    /// A temporary file beside `target`, renamed over it once everything is written.
    private static func replace(
        _ target: String, with bytes: [UInt8], mode: mode_t?, shownAs path: String, what: String, hadFile: Bool
    ) throws {
        let folder = (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        var template = Array(
            ((folder.isEmpty ? "." : folder) as NSString).appendingPathComponent(".\(name).bitflash-XXXXXX").utf8CString
        )
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard fd >= 0 else { throw failure(path, what: what, errno, hadFile: hadFile, creating: true) }
        var closed = false
        do {
            try writeAll(bytes, to: fd, shownAs: path, what: what, hadFile: hadFile)
            let wanted = mode ?? (0o666 & ~currentUmask())
            if fchmod(fd, wanted) != 0 { throw failure(path, what: what, errno, hadFile: hadFile) }
            if fsync(fd) != 0, errno != EINVAL { throw failure(path, what: what, errno, hadFile: hadFile) }
            closed = true
            if close(fd) != 0 { throw failure(path, what: what, errno, hadFile: hadFile) }
            if rename(temporary, target) != 0 { throw failure(path, what: what, errno, hadFile: hadFile) }
        } catch {
            if !closed { close(fd) }
            unlink(temporary)
            throw error
        }
    }

    /// Writes to what is already there: a FIFO, a device.
    private static func writeInPlace(_ bytes: [UInt8], to target: String, shownAs path: String, what: String) throws {
        let fd = open(target, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(path, what: what, errno, hadFile: false) }
        defer { close(fd) }
        try writeAll(bytes, to: fd, shownAs: path, what: what, hadFile: false)
    }

    private static func writeAll(_ bytes: [UInt8], to fd: Int32, shownAs path: String, what: String, hadFile: Bool)
        throws
    {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure(path, what: what, errno, hadFile: hadFile)
            }
            offset += n
        }
    }

    /// `out.hex: cannot write the file: no space left on the device (out.hex is unchanged)`.
    static func failure(_ path: String, what: String, _ code: Int32, hadFile: Bool, creating: Bool = false) -> CLIError
    {
        let folder = (path as NSString).deletingLastPathComponent
        let reason: String
        switch code {
        case ENOSPC: reason = "no space left on the device"
        case EDQUOT: reason = "the disk quota is used up"
        case EFBIG:
            reason =
                "the file would be larger than this process may write (the file-size limit, see `ulimit -f`) or than the file system allows"
        case EACCES, EPERM:
            reason = creating ? "permission denied in the folder \(folder.isEmpty ? "." : folder)" : "permission denied"
        case EROFS: reason = "the file system is read-only"
        case ENOENT: reason = "the folder \(folder.isEmpty ? "." : folder) does not exist"
        case ENOTDIR: reason = "a part of the path is not a directory"
        case EISDIR: reason = "it is a directory; give a file name"
        case ENXIO: reason = "nothing is reading from it (a FIFO without a reader, or a socket)"
        case EIO: reason = "input/output error (a failing disk or a removed drive)"
        default: reason = String(cString: strerror(code)).lowercased()
        }
        let kept = hadFile ? " (\(path) is unchanged)" : ""
        return CLIError(.cannotWrite, "\(path): cannot write \(what): \(reason)\(kept)")
    }

    /// A file-size limit would otherwise kill the process (SIGXFSZ) before the write could fail.
    private static func ignoreFileSizeSignal() {
        signal(SIGXFSZ, SIG_IGN)
    }

    private static func currentUmask() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }
}

private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
