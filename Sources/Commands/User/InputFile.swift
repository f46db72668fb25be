import FirmwareImage
import Foundation
import SystemFiles

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

    let path: String
    let kind: Kind
    /// The size of a regular file; nil for a stream.
    let size: Int?
    /// Closed when the last copy of the file goes.
    private let descriptor: SystemFile

    /// Opens `path` for reading.
    /// - Throws: `CLIError(.cannotRead)` saying what the path is or why it cannot be read.
    static func open(_ path: String) throws -> InputFile {
        switch try? FileStatus.of(path).kind {
        case .directory?: throw CLIError(.cannotRead, "\(path): is a directory, not a firmware file")
        case .socket?: throw CLIError(.cannotRead, "\(path): is a socket, not a firmware file")
        default: break
        }
        let descriptor: SystemFile
        let info: FileStatus
        do {
            descriptor = try SystemFile.open(path, flags: O_RDONLY)
            info = try descriptor.status()
        } catch {
            throw failure(path, error.code)
        }
        let kind: Kind
        switch info.kind {
        case .regular: kind = .regular
        case .fifo: kind = .fifo
        case .characterDevice: kind = .characterDevice
        case .blockDevice: kind = .blockDevice
        case .directory: throw CLIError(.cannotRead, "\(path): is a directory, not a firmware file")
        default: kind = .other
        }
        return InputFile(
            path: path, kind: kind, size: kind == .regular ? Int(info.size) : nil, descriptor: descriptor)
    }

    private init(path: String, kind: Kind, size: Int?, descriptor: SystemFile) {
        self.path = path
        self.kind = kind
        self.size = size
        self.descriptor = descriptor
    }

    mutating func read(maximum: Int) throws -> [UInt8] {
        do { return try descriptor.read(maximum: max(1, min(maximum, 1 << 20))) } catch {
            throw Self.failure(path, error.code)
        }
    }

    /// Back to the first byte; only a regular file can.
    mutating func rewind() throws {
        guard kind == .regular, (try? descriptor.rewind()) != nil else {
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
                    "\(path): holds more than the \(Figures.grouped(limit)) bytes this command reads (\(kind.name))"
                )
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
        default: reason = SystemError(code).description.lowercased()
        }
        return CLIError(.cannotRead, "\(path): cannot read the file: \(reason)")
    }
}
