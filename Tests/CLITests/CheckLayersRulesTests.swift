import Foundation
import Testing
import TestSupport

/// `scripts/check-layers`' other rules, each seen to fail on a planted violation in a copy of the
/// tree (the import forms and unsafe code are `CheckLayersScriptTests`).
@Suite(.checkLayersRuns)
struct CheckLayersRulesTests {
    /// A Swift file planted at `path` and the problem the script must report for it.
    struct Planted: Sendable, CustomTestStringConvertible {
        var path: String
        var code: String
        var problem: String
        var testDescription: String { problem }
    }

    static let plantedFiles = [
        Planted(
            path: "Sources/FirmwareImage/Planted.swift", code: "import Flasher\n",
            problem:
                "Sources/FirmwareImage/Planted.swift:1: FirmwareImage (format layer) imports Flasher (flasher layer)"),
        Planted(
            path: "Sources/CBOR/Planted.swift", code: "import SMP\n",
            problem:
                "Sources/CBOR/Planted.swift:1: CBOR imports SMP, which its dependencies in Package.swift do not declare"
        ),
        Planted(
            path: "Sources/SimulatedBoard/Planted.swift", code: "import PartialFlashing\n",
            problem: "SimulatedBoard is a simulated board or fake and imports the client flow PartialFlashing"),
        Planted(
            path: "Sources/Flashing/Planted.swift", code: "func planted() {\n    print(\"done\")\n}\n",
            problem: "Sources/Flashing/Planted.swift:2: Flashing is a library module and prints"),
        Planted(
            path: "Sources/Transport/Planted.swift",
            code: "import Foundation\n\nfunc planted() {\n    FileHandle.standardError.write(Data())\n}\n",
            problem: "Sources/Transport/Planted.swift:4: Transport is a library module and prints")
    ]

    @Test("a planted violation of each import and printing rule fails", arguments: plantedFiles)
    func plantedFileFails(_ planted: Planted) async throws {
        let tree = try CheckLayersScriptTests.copyOfTheTree()
        try Data(planted.code.utf8).write(to: tree.appendingPathComponent(planted.path))
        let r = try await CheckLayersScriptTests.checkLayers(tree)
        #expect(r.status == 1, "\(r.stdout)")
        #expect(r.stderr.contains(planted.problem), "\(r.stderr)")
    }

    /// Replaces `old` (which must be there) with `new` in the copy's Package.swift.
    static func editPackage(_ tree: URL, _ old: String, _ new: String) throws {
        let url = tree.appendingPathComponent("Package.swift")
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains(old), "Package.swift no longer holds \(old)")
        try Data(text.replacingOccurrences(of: old, with: new).utf8).write(to: url)
    }

    @Test func aModuleWithoutATestTargetFails() async throws {
        let tree = try CheckLayersScriptTests.copyOfTheTree()
        try Self.editPackage(
            tree, #".testTarget(name: "LinkModelTests", dependencies: ["LinkModel", "FirmwareImage"]),"#, "")
        let r = try await CheckLayersScriptTests.checkLayers(tree)
        #expect(r.status == 1, "\(r.stdout)")
        #expect(r.stderr.contains("LinkModel: a library module with no test target LinkModelTests"), "\(r.stderr)")
    }

    @Test func aLibraryProductHoldingTheLaboratoryFails() async throws {
        let tree = try CheckLayersScriptTests.copyOfTheTree()
        try Self.editPackage(
            tree, #".library(name: "FirmwareImage", targets: ["FirmwareImage"])"#,
            #".library(name: "FirmwareImage", targets: ["FirmwareImage", "Laboratory"])"#)
        let r = try await CheckLayersScriptTests.checkLayers(tree)
        #expect(r.status == 1, "\(r.stdout)")
        #expect(r.stderr.contains("the library product FirmwareImage contains Laboratory"), "\(r.stderr)")
    }

    /// The copy with docs/testing.md and Tests/campaign-ci.sh, whose counts the script compares.
    static func copyWithCampaignDocs() throws -> URL {
        let tree = try CheckLayersScriptTests.copyOfTheTree()
        let fm = FileManager.default
        try fm.createDirectory(at: tree.appendingPathComponent("docs"), withIntermediateDirectories: true)
        for path in ["docs/testing.md", "Tests/campaign-ci.sh"] {
            try fm.copyItem(
                at: Corpus.repoRoot.appendingPathComponent(path), to: tree.appendingPathComponent(path))
        }
        return tree
    }

    @Test func theCampaignCountsTheDocsStateMatchTheScript() async throws {
        let r = try await CheckLayersScriptTests.checkLayers(try Self.copyWithCampaignDocs())
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test func aHostileBoardAddedToTheCampaignButNotToTheDocsFails() async throws {
        let tree = try Self.copyWithCampaignDocs()
        let script = tree.appendingPathComponent("Tests/campaign-ci.sh")
        let text = try String(contentsOf: script, encoding: .utf8)
        #expect(text.contains("for kind in moving-region "))
        try Data(
            text.replacingOccurrences(of: "for kind in moving-region ", with: "for kind in phantom-acks moving-region ")
                .utf8
        )
        .write(to: script)
        let r = try await CheckLayersScriptTests.checkLayers(tree)
        #expect(r.status == 1, "\(r.stdout)")
        #expect(
            r.stderr.contains("docs/testing.md: says the CI campaign runs against four hostile boards"), "\(r.stderr)")
    }
}
