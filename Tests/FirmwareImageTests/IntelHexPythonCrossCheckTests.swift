import Foundation
import Testing
import TestSupport
@testable import FirmwareImage

/// Our writer's output, read back by Python `intelhex` (the reference the corpus was checked with),
/// must hold exactly our bytes. Skipped when python3 or intelhex is missing.
@Suite(
    .enabled(
        if: PythonIntelHex.isAvailable,
        "python3 with the intelhex package not found: cross-check skipped (pip install intelhex)"))
struct IntelHexPythonCrossCheckTests {
    static let options: [(String, IntelHexWriter.Options)] = [
        ("defaults", .init()),
        ("32-byte records", .init(recordLength: 32)),
        ("255-byte records", .init(recordLength: 255)),
        ("7-byte records, CRLF, lower case", .init(recordLength: 7, lineEnding: .crlf, uppercase: false)),
        ("02 addressing", .init(addressing: .segmentWherePossible)),
        ("shuffled", .init(shuffleSeed: 99))
    ]

    @Test("intelhex reads our writer's output", arguments: options.indices)
    func intelhexReadsOurOutput(_ k: Int) throws {
        let (label, options) = Self.options[k]
        for built in [HexFixtures.makeCode(.nrf51, seed: 3), HexFixtures.makeCode(.nrf52833, seed: 4)] {
            let text = IntelHexWriter.write(built.image, options: options)
            let theirs = try PythonIntelHex.read(text)
            expectSameImage(theirs, built.image, "intelhex, \(label)")
        }
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func weReadCorpusFilesAsIntelhexDoes() throws {
        for path in [
            "real/calliope-mini3-micropython.hex", "real/makecode-v1-1.2.13-small-heart.hex",
            "real/codal-v2-data-collection-crlf.hex", "real/mcuboot-zephyr-hello_world.hex"
        ] {
            let bytes = try Corpus.bytes(path)
            let ours = try IntelHexReader.parse(bytes).sections[0].image
            expectSameImage(ours, try PythonIntelHex.read(bytes), path)
        }
    }
}

/// Runs Python `intelhex` on a file and returns the bytes it read.
enum PythonIntelHex {
    static let isAvailable: Bool = {
        guard let (status, _) = try? run(["-c", "import intelhex"], input: nil) else { return false }
        return status == 0
    }()

    /// Segments as `start end hexbytes` lines, from `IntelHex(path).segments()`.
    static let script = #"""
        import sys
        from intelhex import IntelHex
        ih = IntelHex(sys.argv[1])
        for start, end in ih.segments():
            print("%x %x %s" % (start, end, ih.tobinstr(start=start, end=end - 1).hex()))
        """#

    static func read(_ hex: [UInt8]) throws -> MemoryImage {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bitflash-xcheck-\(UUID().uuidString).hex")
        try Data(hex).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let (status, output) = try run(["-c", script, url.path], input: nil)
        guard status == 0 else { throw CrossCheckError(message: "intelhex failed: \(output.suffix(500))") }
        var image = MemoryImage()
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 3, let start = UInt32(parts[0], radix: 16) else { continue }
            var bytes: [UInt8] = []
            var i = parts[2].startIndex
            while i < parts[2].endIndex {
                let j = parts[2].index(i, offsetBy: 2)
                bytes.append(UInt8(parts[2][i..<j], radix: 16)!)
                i = j
            }
            try image.write(bytes, at: start)
        }
        return image
    }

    struct CrossCheckError: Error { var message: String }

    static func run(_ arguments: [String], input: Data?) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3"] + arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
