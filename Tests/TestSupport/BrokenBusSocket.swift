import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A Unix socket that accepts connections as a bus would and then never speaks D-Bus: it stays
/// silent, or answers every message with bytes that are no D-Bus. What a client meets when the
/// bus daemon is hung or something else listens at its address. Closed on deinit.
public final class BrokenBusSocket: @unchecked Sendable {
    public enum Behaviour: String, Sendable, CaseIterable {
        /// Accepts, reads, never answers.
        case silent
        /// Answers whatever comes with bytes that are not D-Bus.
        case garbage
    }

    /// `unix:path=…`, for `DBUS_SYSTEM_BUS_ADDRESS`.
    public let address: String
    private let directory: URL
    private let listener: Int32
    private var accepted: [Int32] = []
    private let lock = NSLock()

    public init(_ behaviour: Behaviour) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bitflash-broken-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("bus").path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var name = sockaddr_un()
        name.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &name.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &name) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard fd >= 0, bound == 0, listen(fd, 16) == 0 else {
            throw BusFixtureError.daemonDidNotStart("cannot listen on \(path): errno \(errno)")
        }
        address = "unix:path=\(path)"
        listener = fd
        let listener = fd
        let thread = Thread { [weak self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                guard let self else { close(client); return }
                self.lock.withLock { self.accepted.append(client) }
                Thread { Self.serve(client, behaviour) }.start()
            }
        }
        thread.start()
    }

    private static func serve(_ client: Int32, _ behaviour: Behaviour) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let garbage = Array("HTTP/1.1 400 Bad Request\r\n\r\n\u{0}\u{FF}\u{FE}not d-bus\r\n".utf8)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard n > 0 else { return }
            if behaviour == .garbage {
                // MSG_NOSIGNAL: a client that has gone must not stop the test process with SIGPIPE.
                _ = garbage.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        lock.withLock { for fd in accepted { shutdown(fd, Int32(SHUT_RDWR)); close(fd) } }
        try? FileManager.default.removeItem(at: directory)
    }
}
