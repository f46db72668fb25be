import FirmwareImage
import Foundation
import SampleFirmware
import Testing
import TestSupport

/// Inputs are recognised from their first bytes and refused for their size before they are read:
/// whatever the file, bitflash's peak memory stays under 64 MB (measured on the child process).
/// What is not a regular file says what it is; ranges and empty sections never make huge outputs;
/// what the reader ignored is said on every command.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct InputFileTests {
    static let memoryBound = 64 << 20

    /// Runs `command` (a shell command line, `$B` being bitflash) as the only child of a Python
    /// process and returns its exit status, its peak RSS in bytes (`RUSAGE_CHILDREN`, KiB on Linux)
    /// and the wall time.
    static func measure(_ command: String) throws -> (status: Int32, peak: Int, seconds: Double, stderr: String) {
        let script = """
            import os, resource, subprocess, sys, time
            t = time.monotonic()
            r = subprocess.run(["/bin/sh", "-c", sys.argv[1]], env=dict(os.environ, B=sys.argv[2]),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, time.monotonic() - t)
            sys.stdout.write(r.stderr.decode(errors="replace"))
            """
        let r = try ReferenceTools.run("python3", ["-c", script, command, try #require(BitflashBinary.url).path])
        let first = r.stdout.split(separator: "\n", maxSplits: 1)
        let fields = try #require(first.first, "\(r.stderr)").split(separator: " ")
        return (
            Int32(fields[0]) ?? -1, Int(fields[1]) ?? 0, Double(fields[2]) ?? 0, first.count > 1 ? String(first[1]) : ""
        )
    }

    /// `8,916,480`.
    static func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        return String(digits.enumerated().flatMap { k, c in k > 0 && (digits.count - k) % 3 == 0 ? [",", c] : [c] })
    }

    /// A file of `size` bytes that starts with `head` and is sparse after it.
    static func sparse(_ url: URL, head: [UInt8], size: Int) throws {
        try Data(head).write(to: url)
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
    }

    @Test(
        .enabled(
            if: ReferenceTools.works("python3", ["-c", "import resource"]), "python3 not found: memory test skipped"))
    func peakMemoryStaysUnder64MBForAnyInput() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let limit = Firmware.Format.intelHex.maximumFileSize
        // About 1 MB: a real-sized Universal Hex.
        let small = dir.appendingPathComponent("1MB.hex")
        try FileManager.default.copyItem(at: BitflashBinary.sample("sample-r1-heart.hex"), to: small)
        // Just under the Intel HEX limit: 3 MB of data in 16-byte records.
        var image = MemoryImage()
        try image.write((0..<(limit / 45 * 16 - 4096)).map { UInt8(truncatingIfNeeded: $0 &* 31) }, at: 0)
        let largest = dir.appendingPathComponent("largest.hex")
        try Data(IntelHexWriter.write(image)).write(to: largest)
        // Just under the limit too: one byte at every other address, each byte a range of its own.
        var scattered: [UInt8] = []
        var address = 0
        while scattered.count < limit - 64 {
            if address % 0x10000 == 0 {
                scattered += Array(
                    (IntelHexRecord.extendedLinearAddress(upper: UInt16(address >> 16)).encoded() + "\n").utf8)
            }
            scattered += Array(
                (IntelHexRecord(type: .data, offset: UInt16(address & 0xFFFF), data: [0x55]).encoded() + "\n").utf8)
            address += 2
        }
        scattered += Array(":00000001FF\n".utf8)
        try Data(scattered).write(to: dir.appendingPathComponent("scattered.hex"))
        let line = Array(":10000000000102030405060708090A0B0C0D0E0F78\n".utf8)
        for (name, size) in [("64MB.hex", 64_000_000), ("200MB.hex", 200_000_000), ("1GiB.hex", 1 << 30)] {
            try Self.sparse(dir.appendingPathComponent(name), head: line, size: size)
        }
        try Self.sparse(dir.appendingPathComponent("1GiB-zeros.bin"), head: [0], size: 1 << 30)
        let cases: [(label: String, command: String, status: Int32, says: String)] = [
            ("1 MB hex", "$B inspect '\(small.path)'", 0, ""),
            ("\(limit / 1_000_000) MB hex (the limit)", "$B inspect '\(largest.path)'", 0, ""),
            (
                "\(limit / 1_000_000) MB of scattered bytes",
                "$B inspect '\(dir.appendingPathComponent("scattered.hex").path)'", 65, "separate address ranges"
            ),
            (
                "64 MB hex", "$B inspect '\(dir.appendingPathComponent("64MB.hex").path)'", 65,
                "the file is 64,000,000 bytes; an Intel HEX file for these boards is at most"
            ),
            (
                "200 MB hex",
                "$B flash '\(dir.appendingPathComponent("200MB.hex").path)' --simulate --sim-state '\(dir.path)/s'", 65,
                "is at most"
            ),
            (
                "1 GiB hex",
                "$B convert '\(dir.appendingPathComponent("1GiB.hex").path)' --board v2 --to bin -o '\(dir.path)/x.bin'",
                65, "is at most"
            ),
            (
                "1 GiB of zeros", "$B inspect '\(dir.appendingPathComponent("1GiB-zeros.bin").path)'", 65,
                "not a firmware file this tool reads"
            ),
            (
                "200 MB hex through a pipe",
                "yes ':10000000000102030405060708090A0B0C0D0E0F78' | head -c 200000000 | $B inspect /dev/stdin", 65,
                "the file goes on past \(Self.grouped(limit)) bytes"
            ),
            ("/dev/zero", "$B inspect /dev/zero", 65, "(/dev/zero is a character device, not a regular file)")
        ]
        print("peak RSS of bitflash per input (RUSAGE_CHILDREN, bound \(Self.memoryBound >> 20) MiB):")
        for c in cases {
            let m = try Self.measure(c.command)
            print(
                "  " + c.label.padding(toLength: 30, withPad: " ", startingAt: 0)
                    + String(format: "exit %3d  %6.1f MB  %6.2f s", m.status, Double(m.peak) / 1e6, m.seconds))
            #expect(m.status == c.status, "\(c.label): \(m.stderr)")
            #expect(c.says.isEmpty || m.stderr.contains(c.says), "\(c.label): \(m.stderr)")
            #expect(m.peak > 0 && m.peak < Self.memoryBound, "\(c.label): peak RSS \(m.peak) bytes")
        }
    }

    @Test func whatIsNotARegularFileSaysWhatItIs() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let zero = try BitflashBinary.run([
            "flash", "/dev/zero", "--simulate", "--sim-state", dir.appendingPathComponent("s").path
        ])
        #expect(zero.status == 65)
        #expect(
            zero.stderr.contains(
                "/dev/zero: not a firmware file this tool reads (Intel HEX, Universal Hex, UF2, MCUboot image, DFU zip): it starts with 00 00 00 00 00 00 00 00"
            ), "\(zero.stderr)")
        #expect(zero.stderr.contains("(/dev/zero is a character device, not a regular file)"))
        #expect(!zero.stderr.contains("permission"))
        let empty = try BitflashBinary.run(["inspect", "/dev/null"])
        #expect(empty.status == 65 && empty.stderr.contains("/dev/null: the file is empty"), "\(empty.stderr)")
        // A FIFO is read as it streams in, whatever it carries.
        let fifo = dir.appendingPathComponent("in.fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        for (source, status) in [(BitflashBinary.sample("sample-r1-heart.hex").path, Int32(0)), ("/etc/hostname", 65)] {
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/bin/sh")
            writer.arguments = ["-c", "cat \"$0\" > \"$1\"", source, fifo.path]
            try writer.run()
            let r = try BitflashBinary.run(["inspect", fifo.path])
            writer.waitUntilExit()
            #expect(r.status == status, "\(source): \(r.stderr)")
            if status == 0 {
                #expect(r.stdout.contains("in.fifo: Universal Hex"), "\(r.stdout)")
            } else {
                #expect(r.stderr.contains("(\(fifo.path) is a FIFO or pipe, not a regular file)"), "\(r.stderr)")
            }
        }
    }

    @Test func binRangesStayInsideTheBoardsMemory() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let input = BitflashBinary.sample("sample-r1-heart.hex").path
        let out = dir.appendingPathComponent("x.bin")
        let huge = try BitflashBinary.run([
            "convert", input, "--board", "microbit-v2", "--to", "bin", "--range", "0x0-0x40000000", "-o", out.path
        ])
        #expect(huge.status == 64)
        #expect(
            huge.stderr.contains(
                "--range 0x0-0x40000000: reaches outside the micro:bit V2's flash (0x00000-0x80000, 512 KiB) and its UICR"
            ), "\(huge.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
        let v1 = try BitflashBinary.run([
            "convert", input, "--board", "microbit-v1", "--to", "bin", "--range", "0x30000-0x40001", "-o", out.path
        ])
        #expect(
            v1.status == 64 && v1.stderr.contains("micro:bit V1's flash (0x00000-0x40000, 256 KiB)"), "\(v1.stderr)")
        let whole = try BitflashBinary.run([
            "convert", input, "--board", "microbit-v1", "--to", "bin", "--range", "0x0-0x40000", "-o", out.path
        ])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect((try FileManager.default.attributesOfItem(atPath: out.path)[.size] as? Int) == 0x40000)
        let uicr = try BitflashBinary.run([
            "convert", input, "--board", "microbit-v2", "--to", "bin", "--range", "0x10001000-0x10001020", "-o",
            out.path
        ])
        #expect(uicr.status == 0, "\(uicr.stderr)")
    }

    @Test func aBinOfARangeWithoutDataIsRefused() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        // A V2 image holding only its SoftDevice stand-in and bootloader: nothing in the application region.
        let image = SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart)
        let file = dir.appendingPathComponent("no-app.hex")
        try Data(IntelHexWriter.write(image.slice(0..<0x1C000))).write(to: file)
        let out = dir.appendingPathComponent("x.bin")
        let r = try BitflashBinary.run(["convert", file.path, "--board", "microbit-v2", "--to", "bin", "-o", out.path])
        #expect(r.status == 65)
        #expect(
            r.stderr.contains(
                "the micro:bit V2 image has no data in 0x1C000-0x77000 (the application region; give another with --range): a binary of it would be 372,736 bytes of 0xFF, so none is written"
            ),
            "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test func linesAfterTheEndOfFileAreAWarningOnEveryCommand() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        var text = try String(contentsOf: BitflashBinary.sample("sample-r1-heart.hex"), encoding: .utf8)
        text += ":10000000000102030405060708090A0B0C0D0E0F78\ngarbage\n"
        let file = dir.appendingPathComponent("tail.hex")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let warning = "warning: \(file.path): ignored 2 lines after the end-of-file record"
        let runs: [[String]] = [
            ["flash", file.path, "--simulate", "--sim-state", dir.appendingPathComponent("s").path],
            ["plan", file.path],
            [
                "convert", file.path, "--board", "microbit-v2", "--to", "hex", "-o",
                dir.appendingPathComponent("out.hex").path
            ]
        ]
        for args in runs {
            let r = try BitflashBinary.run(args)
            #expect(r.status == 0, "\(args[0]): \(r.stderr)")
            #expect(
                r.stderr.components(separatedBy: "\n").filter { $0.contains(warning) }.count == 1,
                "\(args[0]): \(r.stderr)")
        }
        let inspect = try BitflashBinary.run(["inspect", file.path])
        #expect(inspect.stdout.contains("ignored 2 lines after the end-of-file record"))
    }
}
