import Diagnostics
import Foundation
import Testing

/// Foundation's file and JSON errors read as what happened, never as "NSCocoaErrorDomain error 4".
@Suite struct FoundationErrorTextTests {
    static func words(_ body: () throws -> Void) -> String {
        do { try body() } catch { return FoundationErrorText.describe(error) }
        return "no error"
    }

    @Test func fileErrorsSayWhatHappened() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = Self.words { _ = try Data(contentsOf: dir.appendingPathComponent("missing.json")) }
        #expect(missing == "no such file or directory", "\(missing)")
        let file = dir.appendingPathComponent("file")
        try Data([1]).write(to: file)
        let inTheWay = Self.words {
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        }
        #expect(!inTheWay.contains("NSCocoaErrorDomain") && !inTheWay.contains("could not be completed"), "\(inTheWay)")
        let directory = Self.words { _ = try Data(contentsOf: dir) }
        #expect(
            !directory.contains("NSCocoaErrorDomain") && !directory.contains("could not be completed"), "\(directory)")
    }

    @Test func jsonErrorsNameTheKeyOrSayTheJSONIsNotValid() {
        struct Record: Decodable { var name: String }
        let broken = Self.words { _ = try JSONDecoder().decode(Record.self, from: Data("{".utf8)) }
        #expect(broken.hasPrefix("the file is not valid JSON"), "\(broken)")
        let missing = Self.words { _ = try JSONDecoder().decode(Record.self, from: Data("{}".utf8)) }
        #expect(missing == "the key \"name\" is missing", "\(missing)")
        let wrong = Self.words { _ = try JSONDecoder().decode(Record.self, from: Data(#"{"name": 3}"#.utf8)) }
        #expect(wrong == "name is not a string", "\(wrong)")
    }
}
