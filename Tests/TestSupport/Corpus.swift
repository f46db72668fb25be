import Foundation

/// Where the shared firmware corpus and the repository live, for tests.
public enum Corpus {
    /// The repository root (found from this file's path).
    public static let repoRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/testdata` beside the repository, or `BITFLASH_TESTDATA` if set.
    public static let testdata: URL = {
        if let env = ProcessInfo.processInfo.environment["BITFLASH_TESTDATA"] {
            return URL(fileURLWithPath: env)
        }
        return repoRoot.deletingLastPathComponent().appendingPathComponent("shared/testdata")
    }()

    /// True when the corpus is present. Corpus tests are skipped, with this message, when it is not.
    public static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: testdata.appendingPathComponent("analysis.json").path)
    }

    public static let skipMessage =
        "shared firmware corpus not found beside the repository (../shared/testdata): corpus test skipped"

    /// The bytes of a corpus file, e.g. `real/makecode-universal-8.0.18-small-heart.hex`.
    public static func bytes(_ relativePath: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: testdata.appendingPathComponent(relativePath)))
    }

    /// The parsed `analysis.json`.
    public static func analysis() throws -> [String: Any] {
        let data = try Data(contentsOf: testdata.appendingPathComponent("analysis.json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// The samples folder of the repository.
    public static let samples: URL = repoRoot.appendingPathComponent("Samples")
}
