import Foundation
import TestSupport

/// What the CLI tests add to the shared runner: temporary folders and the sample files.
extension BitflashBinary {
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
        _ = try? lab(["sim", "samples", dir.path])
        return dir
    }()
}
