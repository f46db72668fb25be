import Foundation
import Testing
import TestSupport

/// Output files are never lost: an output that is the input is refused; every file is written
/// beside its target and renamed only when complete, so a full disk or a file-size limit leaves the
/// previous file as it was (exit 73); a FIFO or a device is written in place, never replaced; a
/// symbolic link is refused, never followed (StateFolderSafetyTests).
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct OutputFileTests {
    /// Runs bitflash under `/bin/sh` after `prelude` (e.g. `ulimit -f 8`).
    static func runInShell(_ prelude: String, _ arguments: [String], lab: Bool = false) throws -> (
        status: Int32, stderr: String
    ) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments =
            [
                "-c", "\(prelude); exec \"$0\" \"$@\"",
                try #require(lab ? BitflashBinary.labURL : BitflashBinary.url).path
            ] + arguments
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        try p.run()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: e, as: UTF8.self))
    }

    static func fileType(_ path: String) -> FileAttributeType? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
    }

    static func sample() throws -> (dir: URL, input: URL) {
        let dir = try BitflashBinary.temporaryDirectory()
        let input = dir.appendingPathComponent("prog.hex")
        try FileManager.default.copyItem(at: BitflashBinary.sample("sample-r1-heart.hex"), to: input)
        return (dir, input)
    }

    @Test func convertRefusesToWriteOverItsInputByAnyName() throws {
        let (dir, input) = try Self.sample()
        let before = try Data(contentsOf: input)
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent("link.hex").path, withDestinationPath: "prog.hex")
        try FileManager.default.linkItem(at: input, to: dir.appendingPathComponent("hard.hex"))
        for output in [
            input.path, dir.appendingPathComponent("link.hex").path, dir.appendingPathComponent("hard.hex").path,
            dir.appendingPathComponent("./prog.hex").path
        ] {
            let r = try BitflashBinary.run([
                "convert", input.path, "--board", "microbit-v2", "--to", "uf2", "-o", output
            ])
            #expect(r.status == 64, "\(output): \(r.stderr)")
            #expect(
                r.stderr.contains(
                    "\(output) is the same file as the input \(input.path): writing the uf2 file there would destroy the file being read"
                ),
                "\(r.stderr)")
        }
        #expect(try Data(contentsOf: input) == before)
        // flash --trace is held to the same rule.
        let trace = try BitflashBinary.lab([
            "flash", input.path, "--simulate", "--sim-state", dir.appendingPathComponent("s").path,
            "--trace", dir.appendingPathComponent("link.hex").path
        ])
        #expect(trace.status == 64, "\(trace.stderr)")
        #expect(try Data(contentsOf: input) == before)
    }

    @Test func aFileSizeLimitLeavesThePreviousOutputIntact() throws {
        let (dir, input) = try Self.sample()
        let output = dir.appendingPathComponent("out.uf2")
        try Data("the previous file\n".utf8).write(to: output)
        // 16 blocks of 512 bytes (dash) or 1024 (bash): far below the 600 KB UF2.
        let r = try Self.runInShell(
            "ulimit -f 16", ["convert", input.path, "--board", "microbit-v2", "--to", "uf2", "-o", output.path])
        #expect(r.status == 73, "\(r.stderr)")
        #expect(
            r.stderr.contains(
                "\(output.path): cannot write the uf2 file: the file would be larger than this process may write (the file-size limit, see `ulimit -f`)"
            ),
            "\(r.stderr)")
        #expect(r.stderr.contains("(\(output.path) is unchanged)"))
        #expect(try String(contentsOf: output, encoding: .utf8) == "the previous file\n")
        // No temporary file is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["out.uf2", "prog.hex"])
        // The same limit on the samples and the trace.
        let samples = dir.appendingPathComponent("samples")
        try FileManager.default.createDirectory(at: samples, withIntermediateDirectories: true)
        try Data("old".utf8).write(to: samples.appendingPathComponent("sample-r1-heart.hex"))
        let s = try Self.runInShell("ulimit -f 16", ["sim", "samples", samples.path], lab: true)
        #expect(s.status == 73, "\(s.stderr)")
        #expect(try String(contentsOf: samples.appendingPathComponent("sample-r1-heart.hex"), encoding: .utf8) == "old")
    }

    @Test func aSuccessfulWriteReplacesTheFileAndKeepsItsPermissions() throws {
        let (dir, input) = try Self.sample()
        let output = dir.appendingPathComponent("out.hex")
        try Data("old".utf8).write(to: output)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: output.path)
        let r = try BitflashBinary.run([
            "convert", input.path, "--board", "microbit-v1", "--to", "hex", "-o", output.path
        ])
        #expect(r.status == 0, "\(r.stderr)")
        // The file holds the new bytes with its old permissions (a link is refused: StateFolderSafetyTests).
        #expect(try String(contentsOf: output, encoding: .utf8).hasPrefix(":"))
        #expect((try FileManager.default.attributesOfItem(atPath: output.path)[.posixPermissions] as? Int) == 0o640)
    }

    @Test(
        .enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "/dev/full not present: device test skipped"))
    func devicesAreWrittenInPlaceNeverReplaced() throws {
        let (dir, input) = try Self.sample()
        let full = try BitflashBinary.run([
            "convert", input.path, "--board", "microbit-v2", "--to", "hex", "-o", "/dev/full"
        ])
        #expect(full.status == 73)
        #expect(
            full.stderr.contains("/dev/full: cannot write the hex file: no space left on the device"), "\(full.stderr)")
        for device in ["/dev/null", "/dev/full"] {
            let flash = try BitflashBinary.lab([
                "flash", input.path, "--simulate", "--sim-state", dir.appendingPathComponent("s").path, "--trace",
                device
            ])
            #expect(flash.status == (device == "/dev/null" ? 0 : 73), "\(device): \(flash.stderr)")
            let campaign = try BitflashBinary.lab(["sim", "campaign", "--runs", "1", "--trace", device])
            #expect(campaign.status == (device == "/dev/null" ? 0 : 73), "\(device): \(campaign.stderr)")
            #expect(Self.fileType(device) == .typeCharacterSpecial, "\(device) is still a device")
        }
    }

    @Test func aTraceIntoAFIFOIsWrittenInPlace() throws {
        let (dir, input) = try Self.sample()
        let fifo = dir.appendingPathComponent("trace.fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // A reader collects what comes through, as `cat FIFO > file` would.
        let received = dir.appendingPathComponent("received.trace")
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "cat \"$0\" > \"$1\"", fifo.path, received.path]
        try reader.run()
        let r = try BitflashBinary.lab([
            "flash", input.path, "--simulate", "--sim-state", dir.appendingPathComponent("s").path, "--trace", fifo.path
        ])
        reader.waitUntilExit()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.fileType(fifo.path) != .typeRegular, "the FIFO is still a FIFO")
        let text = try String(contentsOf: received, encoding: .utf8)
        #expect(text.hasPrefix("{") && text.contains("\"kind\":\"result\""), "\(text.prefix(200))")
    }

    @Test func directoriesAreNamedAsSuch() throws {
        let (dir, input) = try Self.sample()
        let asInput = try BitflashBinary.run([
            "flash", dir.path, "--simulate", "--sim-state", dir.appendingPathComponent("s").path
        ])
        #expect(asInput.status == 66)
        #expect(asInput.stderr.contains("\(dir.path): is a directory, not a firmware file"), "\(asInput.stderr)")
        #expect(!asInput.stderr.contains("NSCocoaErrorDomain"))
        let inspect = try BitflashBinary.run(["inspect", dir.path])
        #expect(inspect.status == 66 && inspect.stderr.contains("is a directory"), "\(inspect.stderr)")
        let asOutput = try BitflashBinary.run([
            "convert", input.path, "--board", "microbit-v2", "--to", "hex", "-o", dir.path
        ])
        #expect(asOutput.status == 73)
        #expect(
            asOutput.stderr.contains("\(dir.path): cannot write the hex file: it is a directory; give a file name"),
            "\(asOutput.stderr)")
        #expect(!asOutput.stderr.contains("NSCocoaErrorDomain"))
    }

    @Test("a one-character file name (-o a, -o -) is written like any other; watch of one is refused, not a crash")
    func oneCharacterNamesAreOrdinaryNames() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let input = BitflashBinary.sample("sample-r1-heart.hex").path
        for name in ["a", "-"] {
            let r = try Self.runInShell(
                "cd '\(dir.path)'", ["convert", input, "--board", "microbit-v2", "--to", "uf2", "-o", name])
            #expect(r.status == 0, "-o \(name): \(r.stderr.prefix(300))")
            let size = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(name).path)[.size]
            #expect((size as? Int ?? 0) > 0, "-o \(name)")
        }
        // Nothing named z here: nothing to watch (66), said in words.
        let watch = try Self.runInShell("cd '\(dir.path)'", ["watch", "z"])
        #expect(watch.status == 66, "\(watch.stderr.prefix(300))")
        #expect(watch.stderr.contains("z: no such file or folder to watch"), "\(watch.stderr.prefix(300))")
    }
}
