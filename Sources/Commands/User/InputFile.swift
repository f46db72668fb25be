import FirmwareImage
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file opened for reading, read in pieces (a `FirmwareByteSource`), never whole.
///
/// A regular file has a size, so a file too large for its format is refused before it is read,
/// and it can be read a second time. Anything else that can be opened is read as a stream: a
/// pipe or FIFO (bitflash waits for its writer, as `cat` does), a character device such as
/// `/dev/zero`. A directory or a socket is refused when it is opened.
struct InputFile: FirmwareByteSource {
    enum Kind: Equatable {
        case regular, fifo, characterDevice, blockDevice, other

        /// `a FIFO (named pipe)`, for messages about what the path names.
        var name: String {
            switch self {
            case .regular: return "a regular file"
            case .fifo: return "a FIFO or pipe"
            case .characterDevice: return "a character device"
            case .blockDevice: return "a block device"
            case .other: return "not a regular file"
            }
        }
    }

    /// Closes the descriptor when the last copy of the file goes.
    private final class Descriptor {
        let fd: Int32
        init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }

    let path: String
    let kind: Kind
    /// The size of a regular file; nil for a stream.
    let size: Int?
    private let descriptor: Descriptor

    /// Opens `path` for reading.
    /// - Throws: `CLIError(.cannotRead)` saying what the path is or why it cannot be read.
    static func open(_ path: String) throws -> InputFile {
        var info = stat()
        guard stat(path, &info) == 0 else { throw failure(path, errno) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            throw CLIError(.cannotRead, "\(path): is a directory, not a firmware file")
        case S_IFSOCK:
            throw CLIError(.cannotRead, "\(path): is a socket, not a firmware file")
        default:
            break
        }
        let fd = posixOpen(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(path, errno) }
        let descriptor = Descriptor(fd)
        guard fstat(fd, &info) == 0 else { throw failure(path, errno) }
        let kind: Kind
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFIFO: kind = .fifo
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        case S_IFDIR: throw CLIError(.cannotRead, "\(path): is a directory, not a firmware file")
        default: kind = .other
        }
        return InputFile(
            path: path, kind: kind, size: kind == .regular ? Int(info.st_size) : nil, descriptor: descriptor)
    }

    private init(path: String, kind: Kind, size: Int?, descriptor: Descriptor) {
        self.path = path
        self.kind = kind
        self.size = size
        self.descriptor = descriptor
    }

    mutating func read(maximum: Int) throws -> [UInt8] {
        let count = max(1, min(maximum, 1 << 20))
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let n = buffer.withUnsafeMutableBytes { posixRead(descriptor.fd, $0.baseAddress, count) }
            if n >= 0 {
                buffer.removeLast(count - n)
                return buffer
            }
            if errno == EINTR { continue }
            throw Self.failure(path, errno)
        }
    }

    /// Back to the first byte; only a regular file can.
    mutating func rewind() throws {
        guard kind == .regular, lseek(descriptor.fd, 0, SEEK_SET) == 0 else {
            throw CLIError(.cannotRead, "\(path): cannot be read a second time (\(kind.name))")
        }
    }

    /// The whole file, at most `limit` bytes of it.
    /// - Throws: `CLIError(.cannotRead)` when it is longer.
    mutating func readAll(limit: Int) throws -> [UInt8] {
        if let size, size > limit {
            throw CLIError(
                .cannotRead,
                "\(path): is \(Figures.grouped(size)) bytes, more than the \(Figures.grouped(limit)) this command reads"
            )
        }
        var bytes: [UInt8] = []
        while true {
            let more = try read(maximum: limit + 1 - bytes.count)
            if more.isEmpty { return bytes }
            bytes += more
            if bytes.count > limit {
                throw CLIError(
                    .cannotRead,
                    "\(path): holds more than the \(Figures.grouped(limit)) bytes this command reads (\(kind.name))")
            }
        }
    }

    /// `prog.hex: permission denied`, in words for the errors a user can act on.
    static func failure(_ path: String, _ code: Int32) -> CLIError {
        let reason: String
        switch code {
        case ENOENT: reason = "no such file"
        case EACCES, EPERM: reason = "permission denied"
        case EISDIR: reason = "is a directory, not a firmware file"
        case ENOTDIR: reason = "a part of the path is not a directory"
        case ENXIO: reason = "is a socket or a device with nothing behind it, not a firmware file"
        case ELOOP: reason = "too many symbolic links"
        case ENAMETOOLONG: reason = "the path is too long"
        case EIO: reason = "input/output error while reading (a failing disk or a removed drive)"
        default: reason = String(cString: strerror(code)).lowercased()
        }
        return CLIError(.cannotRead, "\(path): cannot read the file: \(reason)")
    }
}

// The C calls, under names the methods above do not shadow.
private func posixOpen(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }
private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
