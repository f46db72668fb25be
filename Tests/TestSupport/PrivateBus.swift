import Foundation

/// A private `dbus-daemon` for one test, listening in a temporary directory; killed on deinit.
public final class PrivateBus: @unchecked Sendable {
    public static let daemonPath: String? = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon", "/usr/local/bin/dbus-daemon"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    public static var isAvailable: Bool { daemonPath != nil }
    public static let skipMessage = "dbus-daemon not found: D-Bus bus tests skipped (install the dbus-daemon package)"

    /// The address to connect to, e.g. `unix:path=<temporary directory>/dbus-abc,guid=...`.
    public let address: String
    public let directory: URL
    private let process: Process

    public init() throws {
        guard let daemon = PrivateBus.daemonPath else { throw BusFixtureError.noDaemon }
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("bitflash-dbus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        try PrivateBus.configuration(socketDirectory: directory.path).write(
            to: config, atomically: true, encoding: .utf8)

        process = Process()
        process.executableURL = URL(fileURLWithPath: daemon)
        process.arguments = ["--config-file=\(config.path)", "--print-address=1", "--nofork"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()

        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("unix:") else {
            kill(process.processIdentifier, SIGKILL)
            throw BusFixtureError.daemonDidNotStart(text)
        }
        address = text
    }

    deinit {
        // dbus-daemon --nofork ignores SIGTERM; SIGKILL is fine for a throwaway test bus.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A session-type bus that lets everyone own names and talk to everyone, with limits
    /// high enough for the stress test.
    public static func configuration(socketDirectory: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(socketDirectory)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <limit name="max_replies_per_connection">50000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
          <limit name="reply_timeout">300000</limit>
        </busconfig>
        """
    }
}

public enum BusFixtureError: Error, CustomStringConvertible {
    case noDaemon
    case daemonDidNotStart(String)
    case gaveUpWaiting(String)

    public var description: String {
        switch self {
        case .noDaemon: return "dbus-daemon is not installed"
        case .daemonDidNotStart(let output): return "dbus-daemon did not print an address: '\(output)'"
        case .gaveUpWaiting(let what): return "gave up waiting for \(what) (the test would otherwise hang)"
        }
    }
}
