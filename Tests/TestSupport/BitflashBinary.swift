import Foundation

/// The built `bitflash` executable (`BITFLASH_BIN`, else `.build/debug` or `.build/release`),
/// run to completion by the tests that drive the command line.
public enum BitflashBinary {
    public static var url: URL? { ExternalProcess.bitflash }

    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }

        /// Standard output's lines, without the empty last one.
        public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// The built `bitflash-lab`, the laboratory (benchmarks, campaign, traces, fault injection).
    public static var labURL: URL? { ExternalProcess.bitflashLab }

    /// Runs bitflash with `arguments`; `environment` entries are added to (or replace) the test's own.
    public static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        try run(url, arguments, environment: environment)
    }

    /// Runs the laboratory, `bitflash-lab`, with `arguments`.
    public static func lab(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        try run(labURL, arguments, environment: environment)
    }

    static func run(_ binary: URL?, _ arguments: [String], environment: [String: String]) throws -> Result {
        let p = Process()
        p.executableURL = binary
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["BITFLASH_FORCE_TTY"] = nil
        for (k, v) in environment { env[k] = v }
        p.environment = env
        // Standard error goes to a file, so that neither stream can fill a pipe and block the child.
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bitflash-stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errURL) }
        let err = try FileHandle(forWritingTo: errURL)
        let out = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try err.close()
        let e = (try? Data(contentsOf: errURL)) ?? Data()
        return Result(
            status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self))
    }
}
