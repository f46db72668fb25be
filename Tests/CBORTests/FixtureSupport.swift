import TestSupport
import CBOR
import Foundation

/// Reads the committed fixture files beside the tests.
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")

    /// The lines of a fixture file, without comments and blank lines.
    static func lines(_ name: String) throws -> [String] {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            .split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }

    /// A line's fields separated by " | ", trimmed.
    static func fields(_ line: String) -> [String] {
        line.components(separatedBy: " | ").map { $0.trimmingCharacters(in: .whitespaces) }
    }
}

/// True when `python3 -c 'import <module>'` succeeds.
func pythonHas(_ module: String) -> Bool { Python.has(module) }

/// Runs python3 with `arguments`, feeding `input`; returns its exit status and standard output.
func runPython(_ arguments: [String], input: String?) throws -> (status: Int32, output: String) {
    try Python.run(arguments, input: input)
}
