import Foundation

/// The reference tools the CLI tests check bitflash's output against: Python `intelhex`,
/// `uf2utils` and Adafruit's `uf2conv` for UF2, and MCUboot's `imgtool`. Each test that needs
/// one is skipped, with a message naming the tool, when it is not installed.
enum ReferenceTools {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `command` found on `PATH` (through `env`), with `arguments`.
    static func run(_ command: String, _ arguments: [String]) throws -> Output {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [command] + arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Output(
            status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self))
    }

    static func works(_ command: String, _ arguments: [String]) -> Bool {
        (try? run(command, arguments).status) == 0
    }

    static let hasIntelHex = works("python3", ["-c", "import intelhex"])
    static let hasUF2Utils = works("python3", ["-c", "import uf2utils.file"])
    static let hasUF2Conv = works("uf2conv", ["--help"])
    static let hasImgtool = works("imgtool", ["--help"])

    static let intelHexMissing = "python3 with the intelhex package not found (pip install intelhex): check skipped"
    static let uf2UtilsMissing = "python3 with the uf2utils package not found (pip install uf2utils): check skipped"
    static let uf2ConvMissing = "uf2conv not found (pip install adafruit-uf2): check skipped"
    static let imgtoolMissing = "imgtool not found (pip install imgtool): check skipped"

    /// What a reference reader found in a file: the address runs with data, and the bytes of
    /// those runs, one after the other; for UF2 also the family IDs of the blocks.
    struct Contents {
        var runs: [Range<UInt32>]
        var bytes: [UInt8]
        var families: [UInt32]

        /// The bytes of each run, by its start address.
        var chunks: [(range: Range<UInt32>, bytes: ArraySlice<UInt8>)] {
            var offset = 0
            return runs.map { r in
                defer { offset += r.count }
                return (r, bytes[offset..<(offset + r.count)])
            }
        }
    }

    /// Reads an Intel HEX file (`format` "hex", with intelhex) or a UF2 (`format` "uf2", with
    /// uf2utils; blocks marked "not main flash" left out).
    static func read(_ file: URL, format: String) throws -> Contents {
        let dump = file.deletingPathExtension().appendingPathExtension("\(format)-dump")
        let r = try run("python3", ["-c", readerScript, format, file.path, dump.path])
        guard r.status == 0, let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
            let runs = json["runs"] as? [[Int]], let families = json["families"] as? [Int]
        else {
            throw ToolFailure(message: "the python \(format) reader failed on \(file.lastPathComponent): \(r.stderr)")
        }
        return Contents(
            runs: runs.map { UInt32($0[0])..<UInt32($0[1]) },
            bytes: [UInt8](try Data(contentsOf: dump)), families: families.map(UInt32.init))
    }

    struct ToolFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    private static let readerScript = #"""
        import json, sys
        fmt, path, dump = sys.argv[1:4]
        families = set()
        if fmt == "hex":
            from intelhex import IntelHex
            ih = IntelHex(path)
            runs = [list(s) for s in ih.segments()]
            data = b"".join(ih.tobinstr(start=s, end=e - 1) for s, e in runs)
        else:
            from uf2utils.file import UF2File
            chunks = []
            for block in UF2File.readBlocks(path):
                h = block.header
                if h.flags & 0x1:
                    continue
                if h.flags & 0x2000:
                    families.add(h.board_family)
                chunks.append((h.address, bytes(block.payload[:h.payload_size])))
            chunks.sort()
            runs, parts = [], []
            for address, payload in chunks:
                if runs and runs[-1][1] == address:
                    runs[-1][1] += len(payload)
                else:
                    runs.append([address, address + len(payload)])
                parts.append(payload)
            data = b"".join(parts)
        open(dump, "wb").write(data)
        print(json.dumps({"runs": runs, "families": sorted(families)}))
        """#
}
