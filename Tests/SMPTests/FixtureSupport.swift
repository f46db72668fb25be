import TestSupport
import Foundation

/// Reads the committed fixture files beside the tests.
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")

    static func text(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    /// `name | hex` lines of a frame fixture, as a dictionary; comments are skipped.
    static func frames(in text: String) -> [String: String] {
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.components(separatedBy: " | ").map { $0.trimmingCharacters(in: .whitespaces) }
            if fields.count == 2 { result[fields[0]] = fields[1] }
        }
        return result
    }
}

/// True when `python3 -c 'import <module>'` succeeds.
func pythonHas(_ module: String) -> Bool { Python.has(module) }

/// Runs python3; returns its exit status and standard output.
func runPython(_ arguments: [String]) throws -> (status: Int32, output: String) { try Python.run(arguments) }
