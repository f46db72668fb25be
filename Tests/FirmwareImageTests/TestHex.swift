import Foundation
@testable import FirmwareImage

/// A minimal Intel HEX / Universal Hex reader and writer for these tests only, so the
/// format tests can use corpus hex files and feed Python tools. The module's own hex
/// reader is tested elsewhere.
enum TestHex {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// The memory image of a plain hex, or of the section for `board` (e.g. 0x9903) of a
    /// Universal Hex. Handles record types 00, 01, 02, 04, 0A, 0D; ignores the others.
    static func read(_ bytes: [UInt8], board: UInt16? = nil) throws -> MemoryImage {
        var image = MemoryImage()
        var base: UInt32 = 0
        var section: UInt16?
        for raw in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix(":") else { continue }
            var rec: [UInt8] = []
            var i = line.index(after: line.startIndex)
            while let j = line.index(i, offsetBy: 2, limitedBy: line.endIndex), i != line.endIndex {
                guard let b = UInt8(line[i..<j], radix: 16) else {
                    throw Failure(description: "bad hex digits in \(line)")
                }
                rec.append(b); i = j
            }
            guard rec.count >= 5, rec.count == Int(rec[0]) + 5 else { throw Failure(description: "bad record \(line)") }
            let data = Array(rec[4..<(rec.count - 1)])
            let offset = UInt32(rec[1]) << 8 | UInt32(rec[2])
            switch rec[3] {
            case 0x00, 0x0D:
                if board == nil || section == board { try image.write(data, at: base + offset) }
            case 0x01:
                if board == nil { return image }
            case 0x02: base = (UInt32(data[0]) << 8 | UInt32(data[1])) << 4
            case 0x04: base = (UInt32(data[0]) << 8 | UInt32(data[1])) << 16
            case 0x0A: section = UInt16(data[0]) << 8 | UInt16(data[1])
            default: break
            }
        }
        return image
    }

    /// A plain Intel HEX file of `image` with 16-byte data records.
    static func write(_ image: MemoryImage) -> String {
        var out = ""
        var upper: UInt32? = nil
        func record(_ type: UInt8, _ address: UInt16, _ data: [UInt8]) {
            var rec: [UInt8] = [UInt8(data.count), UInt8(address >> 8), UInt8(address & 0xFF), type] + data
            rec.append(UInt8(truncatingIfNeeded: 0x100 - Int(rec.reduce(0) { $0 &+ $1 })))
            out += ":" + rec.hexString + "\n"
        }
        for segment in image.segments {
            var a = segment.start
            var o = 0
            while o < segment.bytes.count {
                if upper != a >> 16 {
                    upper = a >> 16
                    record(0x04, 0, [UInt8(a >> 24), UInt8(a >> 16 & 0xFF)])
                }
                let n = min(16, segment.bytes.count - o, Int(0x10000 - (a & 0xFFFF)))
                record(0x00, UInt16(a & 0xFFFF), Array(segment.bytes[o..<(o + n)]))
                o += n; a += UInt32(n)
            }
        }
        record(0x01, 0, [])
        return out
    }
}

/// Runs a command-line tool installed with pip, for cross-checks against reference tools.
enum ExternalTool {
    struct Result { let status: Int32; let output: String }

    /// True when `name` is on the PATH.
    static func isInstalled(_ name: String) -> Bool {
        (try? run("sh", ["-c", "command -v \(name) >/dev/null 2>&1"]).status) == 0
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [tool] + arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// A fresh temporary directory for one test.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
