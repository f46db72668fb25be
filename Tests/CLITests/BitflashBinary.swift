import Foundation
import TestSupport

/// The built `bitflash` executable (`BITFLASH_BIN`, else `.build/debug` or `.build/release`).
enum BitflashBinary {
    static let url: URL? = {
        var candidates: [URL] = []
        if let env = ProcessInfo.processInfo.environment["BITFLASH_BIN"] { candidates.append(URL(fileURLWithPath: env)) }
        candidates += ["debug", "release"].map { Corpus.repoRoot.appendingPathComponent(".build/\($0)/bitflash") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Standard output's lines, without the empty last one.
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// Runs bitflash with `arguments`; `environment` entries are added to (or replace) the test's own.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let p = Process()
        p.executableURL = url
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["BITFLASH_FORCE_TTY"] = nil
        for (k, v) in environment { env[k] = v }
        p.environment = env
        // Standard error goes to a file, so that neither stream can fill a pipe and block the child.
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-stderr-\(UUID().uuidString)")
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
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                      stderr: String(decoding: e, as: UTF8.self))
    }

    /// A fresh, empty folder for a test's files and simulated boards.
    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The sample firmware file `name`, as `bitflash sim samples` writes it (once per test run, into a
    /// temporary folder, so that the tests do not depend on the committed copies in Samples/firmware/).
    static func sample(_ name: String) -> URL {
        generatedSamples.appendingPathComponent(name)
    }

    /// The committed copy of a sample file.
    static func committedSample(_ name: String) -> URL {
        Corpus.repoRoot.appendingPathComponent("Samples/firmware/\(name)")
    }

    static let generatedSamples: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-samples-\(UUID().uuidString)")
        _ = try? run(["sim", "samples", dir.path])
        return dir
    }()
}
