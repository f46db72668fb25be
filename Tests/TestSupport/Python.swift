import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Running the Python reference tools (intelhex, cbor2, smp, imgtool, uf2conv) from tests.
/// Tests that need one skip with a message when `Python.has` says it is missing.
///
/// The child is started with `posix_spawn` and reaped with `waitpid` here, not by Foundation's
/// `Process`: its `waitUntilExit` was once seen blocked for good on children that had exited and
/// were never reaped, holding threads every other test needed.
public enum Python {
    /// True when `python3 -c 'import <module>'` succeeds.
    public static func has(_ module: String) -> Bool {
        (try? run(["-c", "import \(module)"]).status) == 0
    }

    /// Runs python3 with `arguments`, feeding `input`; returns its exit status and standard output.
    public static func run(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        // Socket pairs made close-on-exec atomically: no other child started meanwhile by another
        // test inherits an end (its copy would hold our read open until it exits).
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, kind, 0, &toChild) == 0 else { throw POSIXError(.EMFILE) }
        guard socketpair(AF_UNIX, kind, 0, &fromChild) == 0 else {
            close(toChild[0])
            close(toChild[1])
            throw POSIXError(.EMFILE)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ["/usr/bin/env", "python3"] + arguments
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/usr/bin/env", &actions, nil, &cArgs, environ)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else {
            close(toChild[1]); close(fromChild[0])
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .ENOENT)
        }
        // Feed the input on its own thread so a child that writes much before reading cannot block us.
        let bytes = Array((input ?? "").utf8)
        let inputEnd = toChild[1]
        let writer = Thread {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { write(inputEnd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
            close(inputEnd)
        }
        writer.start()
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fromChild[0], $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            output += buffer[0..<n]
        }
        close(fromChild[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw POSIXError(.ECHILD) }
        }
        let exited = (status & 0x7f) == 0
        return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), String(decoding: output, as: UTF8.self))
    }
}

/// Bytes from a hex string, or nil when it is not hex.
public func bytes(hex: String) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    var i = 0
    while i < digits.count {
        guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
        out.append(byte)
        i += 2
    }
    return out
}

/// Lower-case hex of bytes.
public func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
