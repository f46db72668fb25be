import Foundation
import Testing
import TestSupport

/// `scripts/check-layers` sees what it guards: it is run on a copy of the package's Swift files
/// with one violation planted, in each form Swift writes an import or unsafe pointer code.
@Suite(.checkLayersRuns)
struct CheckLayersScriptTests {
    /// A copy of Package.swift, the script and every Swift file of Sources/, Samples/ and Tests/.
    static func copyOfTheTree() throws -> URL {
        let copy = try BitflashBinary.temporaryDirectory()
        let fm = FileManager.default
        let root = Corpus.repoRoot
        for top in ["Sources", "Samples", "Tests"] {
            let base = root.appendingPathComponent(top)
            guard let walk = fm.enumerator(atPath: base.path) else { continue }
            for case let relative as String in walk where relative.hasSuffix(".swift") {
                let target = copy.appendingPathComponent(top).appendingPathComponent(relative)
                try fm.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try fm.copyItem(at: base.appendingPathComponent(relative), to: target)
            }
        }
        try fm.copyItem(
            at: root.appendingPathComponent("Package.swift"), to: copy.appendingPathComponent("Package.swift"))
        return copy
    }

    static func checkLayers(_ tree: URL) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ExternalProcess.run(
            try #require(ExternalProcess.onPath("python3")),
            [Corpus.repoRoot.appendingPathComponent("scripts/check-layers").path, tree.path], timeout: .seconds(120))
    }

    @Test("the package as it is passes")
    func theTreePasses() async throws {
        let r = try await Self.checkLayers(try Self.copyOfTheTree())
        #expect(r.status == 0, "\(r.stderr)")
    }

    static let importForms = [
        "import CDBus", "internal import CDBus", "public import CDBus", "package import CDBus", "private import CDBus",
        "@testable import CDBus", "@_implementationOnly import CDBus", "@preconcurrency internal import CDBus",
        "import struct CDBus.DBusError"
    ]

    @Test("CDBus imported outside DBus, in any form, fails", arguments: importForms)
    func plantedCDBusImportFails(form: String) async throws {
        let tree = try Self.copyOfTheTree()
        let planted = tree.appendingPathComponent("Sources/BlueZTransport/Planted.swift")
        try Data("\(form)\n\nfunc planted() {}\n".utf8).write(to: planted)
        let r = try await Self.checkLayers(tree)
        #expect(r.status == 1, "\(form): \(r.stdout)")
        #expect(
            r.stderr.contains(
                "Sources/BlueZTransport/Planted.swift:1: BlueZTransport imports CDBus; only DBus may use the C library"),
            "\(form): \(r.stderr)")
    }

    @Test(
        "unsafe pointer code outside the modules the layering names fails",
        arguments: [
            "let n = bytes.withUnsafeBytes { $0.count }", "let p: UnsafeMutableRawPointer? = nil",
            "let q = UnsafePointer<UInt8>(bitPattern: 1)"
        ])
    func plantedUnsafeCodeFails(line: String) async throws {
        let tree = try Self.copyOfTheTree()
        let planted = tree.appendingPathComponent("Sources/bitflash/Planted.swift")
        try Data("func planted(_ bytes: [UInt8]) {\n    \(line)\n}\n".utf8).write(to: planted)
        let r = try await Self.checkLayers(tree)
        #expect(r.status == 1, "\(line): \(r.stdout)")
        #expect(r.stderr.contains("Sources/bitflash/Planted.swift:2: bitflash uses unsafe pointers"), "\(r.stderr)")
    }
}

extension Trait where Self == ConditionTrait {
    /// The layering script's tests need python3 and `scripts/check-layers`.
    static var checkLayersRuns: Self {
        .enabled(
            if: ExternalProcess.onPath("python3") != nil
                && FileManager.default.fileExists(
                    atPath: Corpus.repoRoot.appendingPathComponent("scripts/check-layers").path),
            "python3 or scripts/check-layers missing: layering script tests skipped")
    }
}
