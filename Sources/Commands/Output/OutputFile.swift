import Foundation
import SystemFiles

/// Writing an output file so that a failure never costs what was there before: the one way every
/// command writes a file (converted firmware, traces, samples, benchmark reports).
///
/// * A regular file (or a new one) is written to a temporary file beside it, flushed to the disk,
///   given the old file's permissions (a new file gets 0666 less the umask), and renamed over the
///   target only then. A full disk, a file-size limit (`ulimit -f`) or any other failure removes
///   the temporary file and leaves the old one as it was.
/// * A symbolic link is refused, never followed: the file it names may be any other (a board's
///   state, a lock, a file of another program). Give the file itself.
/// * The process's own descriptors (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`,
///   `/proc/self/fd/N`) are written as they are open: `-o /dev/stdout | wc -c` writes into the pipe.
/// * Anything else that can be written (a FIFO, `/dev/null`, `/dev/full`, a terminal) is written
///   in place, never replaced by a regular file. A directory is refused.
/// * `inputs` are files the command reads: an output that is one of them (by name, through a
///   link, or as another hard link to the same file) is refused before anything is written, and
///   so is a board's file, a record or the lock in a folder of simulated boards.
enum OutputFile {
    /// Writes `bytes` to `path`; `what` names the file in messages ("the trace").
    /// - Throws: `CLIError(.usage)` when `path` is one of `inputs` or a state file;
    ///   `CLIError(.cannotWrite)` otherwise.
    static func write(
        _ bytes: [UInt8], to path: String, what: String = "the file", inputs: [String] = []
    ) throws {
        SystemPaths.ignoreFileSizeSignal()
        if let descriptor = ownDescriptor(path) {
            try writeToDescriptor(bytes, descriptor, shownAs: path, what: what)
            return
        }
        try refuseInputs(path, inputs: inputs, what: what)
        let status: FileStatus?
        do { status = try FileStatus.of(path, followingLinks: false) } catch { status = nil }
        switch status?.kind {
        case .symbolicLink?:
            throw linkRefusal(path, what: what)
        case .directory?:
            throw CLIError(
                .cannotWrite, "\(path): cannot write \(what): it is a directory; give a file name")
        case nil, .regular?:
            try replace(path, with: bytes, mode: status?.permissions, what: what, hadFile: status != nil)
        default:
            try writeInPlace(bytes, to: path, what: what)
        }
    }

    /// True when `path` names this process's standard output (so that the command's own lines go
    /// to standard error instead).
    static func isStandardOutput(_ path: String) -> Bool { ownDescriptor(path) == 1 }

    /// Refuses an output that is one of the `inputs` (by name, through a symbolic link, or as
    /// another hard link to the same file), or a file of a folder of simulated boards.
    /// - Throws: `CLIError(.usage)`.
    /// `stateFolder`: the folder of the simulated boards the command uses, refused even before
    /// it holds its lock (a fresh folder).
    static func refuseInputs(_ path: String, inputs: [String], what: String, stateFolder: URL? = nil) throws {
        guard ownDescriptor(path) == nil else { return }
        try refuseStateFile(path, what: what, stateFolder: stateFolder)
        guard !inputs.isEmpty, let info = try? FileStatus.of(path) else { return }
        for input in inputs {
            if let other = try? FileStatus.of(input), other.isSameFile(as: info) {
                throw CLIError(
                    .usage,
                    "\(path) is the same file as the input \(input): writing \(what) there "
                        + "would destroy the file being read; choose another output file")
            }
        }
    }

    /// A board's file (`NAME.json`), the class record or the lock in a folder that holds the
    /// lock of simulated boards (`bitflash.lock`): bitflash reads them back as state.
    /// - Throws: `CLIError(.usage)`.
    static func refuseStateFile(_ path: String, what: String, stateFolder: URL? = nil) throws {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent()
        let name = url.lastPathComponent
        let isStateFolder =
            folder.standardizedFileURL.path == stateFolder?.standardizedFileURL.path
            || (try? FileStatus.of(
                folder.appendingPathComponent(StateFolderLock.fileName).path, followingLinks: false)) != nil
        guard name.hasSuffix(".json") || name.hasSuffix(".lock"), isStateFolder else { return }
        throw CLIError(
            .usage,
            "\(path) is in the folder of the simulated boards \(folder.path), where bitflash keeps the boards and "
                + "their records: writing \(what) there would replace one of them; choose a file elsewhere")
    }

    /// The descriptor `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` or `/proc/self/fd/N` names.
    static func ownDescriptor(_ path: String) -> Int32? {
        switch path {
        case "/dev/stdout": return 1
        case "/dev/stderr": return 2
        default:
            for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
                return Int32(path.dropFirst(prefix.count))
            }
            return nil
        }
    }

    static func linkRefusal(_ path: String, what: String) -> CLIError {
        let target = SystemPaths.linkTarget(path).map { " (to \($0))" } ?? ""
        return CLIError(
            .cannotWrite,
            "\(path) is a symbolic link\(target): bitflash does not write \(what) through a link, so that no other "
                + "file is replaced; give the file itself")
    }

    /// A temporary file beside `target`, renamed over it once everything is written.
    private static func replace(
        _ target: String, with bytes: [UInt8], mode: mode_t?, what: String, hadFile: Bool
    )
        throws
    {
        let folder = folder(of: target)
        let name = (target as NSString).lastPathComponent
        let prefix = ((folder.isEmpty ? "." : folder) as NSString).appendingPathComponent(
            ".\(name).bitflash-")
        let temporary: (file: SystemFile, path: String)
        do { temporary = try SystemPaths.makeTemporary(prefix: prefix) } catch {
            throw failure(target, what: what, code(error), hadFile: hadFile, creating: true)
        }
        do {
            try temporary.file.writeAll(bytes)
            try temporary.file.setPermissions(mode ?? (0o666 & ~SystemPaths.umask))
            try temporary.file.sync()
            try temporary.file.close()
            try SystemPaths.rename(temporary.path, to: target)
        } catch {
            try? temporary.file.close()
            SystemPaths.remove(temporary.path)
            throw failure(target, what: what, code(error), hadFile: hadFile)
        }
    }

    /// Writes to what is already there: a FIFO, a device.
    private static func writeInPlace(_ bytes: [UInt8], to path: String, what: String) throws {
        do {
            let file = try SystemFile.open(path, flags: O_WRONLY | O_NOFOLLOW)
            try file.writeAll(bytes)
            try file.close()
        } catch {
            if code(error) == ELOOP { throw linkRefusal(path, what: what) }
            throw failure(path, what: what, code(error), hadFile: false)
        }
    }

    /// Writes to one of this process's open descriptors, at its offset.
    private static func writeToDescriptor(
        _ bytes: [UInt8], _ descriptor: Int32, shownAs path: String, what: String
    )
        throws
    {
        do {
            try SystemFile.duplicate(descriptor).writeAll(bytes)
        } catch {
            throw failure(path, what: what, code(error), hadFile: false)
        }
    }

    /// The folder part of `path`, as `deletingLastPathComponent` means it ("" for a bare name,
    /// "/" for a name at the root). Linux Foundation's own traps on a one-character name such
    /// as `-o a`, so the split is done here.
    static func folder(of path: String) -> String {
        var rest = Substring(path)
        while rest.count > 1, rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let slash = rest.lastIndex(of: "/") else { return "" }
        var folder = rest[..<slash]
        while folder.count > 1, folder.hasSuffix("/") { folder = folder.dropLast() }
        return folder.isEmpty ? "/" : String(folder)
    }

    private static func code(_ error: any Error) -> Int32 { (error as? SystemError)?.code ?? EIO }

    /// `out.hex: cannot write the file: no space left on the device (out.hex is unchanged)`.
    static func failure(
        _ path: String, what: String, _ code: Int32, hadFile: Bool, creating: Bool = false
    ) -> CLIError {
        let folder = folder(of: path)
        let reason: String
        switch code {
        case ENOSPC: reason = "no space left on the device"
        case EDQUOT: reason = "the disk quota is used up"
        case EFBIG:
            reason =
                "the file would be larger than this process may write (the file-size limit, see `ulimit -f`) or than the file system allows"
        case EACCES, EPERM:
            reason =
                creating
                ? "permission denied in the folder \(folder.isEmpty ? "." : folder)" : "permission denied"
        case EROFS: reason = "the file system is read-only"
        case ENOENT: reason = "the folder \(folder.isEmpty ? "." : folder) does not exist"
        case ENOTDIR: reason = "a part of the path is not a directory"
        case EISDIR: reason = "it is a directory; give a file name"
        case ENXIO: reason = "nothing is reading from it (a FIFO without a reader, or a socket)"
        case EIO: reason = "input/output error (a failing disk or a removed drive)"
        case EBADF: reason = "this process has no such descriptor open for writing"
        case EPIPE: reason = "the reader has gone (a closed pipe)"
        default: reason = SystemError(code).description.lowercased()
        }
        let kept = hadFile ? " (\(path) is unchanged)" : ""
        return CLIError(.cannotWrite, "\(path): cannot write \(what): \(reason)\(kept)")
    }
}
