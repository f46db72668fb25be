import Foundation
import Testing
import TestSupport

/// An output named by the process's own descriptors (`/dev/stdout`, `/dev/fd/1`) goes into the
/// descriptor as it is open, a pipe included: `bitflash convert … -o /dev/stdout | wc -c`.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct PipeOutputTests {
    let dir: URL
    init() throws { dir = try BitflashBinary.temporaryDirectory() }

    var input: String { BitflashBinary.sample("sample-r1-heart.hex").path }

    @Test(
        "convert -o /dev/stdout or /dev/fd/1 into a pipe gives exactly the file's text; the summary goes to standard error",
        arguments: ["/dev/stdout", "/dev/fd/1"])
    func convertIntoAPipe(output: String) throws {
        let file = dir.appendingPathComponent("heart.hex")
        let toFile = try BitflashBinary.run(["convert", input, "--board", "microbit-v1", "--to", "hex", "-o", file.path]
        )
        #expect(toFile.status == 0, "\(toFile.stderr)")
        // BitflashBinary.run gives the child a pipe for standard output.
        let r = try BitflashBinary.run(["convert", input, "--board", "microbit-v1", "--to", "hex", "-o", output])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == (try String(contentsOf: file, encoding: .utf8)))
        #expect(r.stderr.contains("wrote \(output): hex"), "\(r.stderr)")
    }

    @Test("flash --trace /dev/stdout writes the trace into the pipe")
    func traceIntoAPipe() throws {
        let r = try BitflashBinary.lab([
            "flash", input, "--simulate", "--sim-state", dir.appendingPathComponent("s").path, "--trace", "/dev/stdout"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(#""kind":"meta""#), "\(r.stdout.prefix(400))")
    }

    /// Runs bitflash with standard output set up by `stdout` ("closed": `>&-`; "gone": a pipe whose
    /// reader has already closed it) and standard error into a pipe: its status and standard error.
    func runWithBrokenOutput(_ stdout: String, _ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let binary = try #require(BitflashBinary.url)
        let p = Process()
        let reader = Pipe()
        if stdout == "closed" {
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", #"exec "$0" "$@" >&-"#, binary.path] + arguments
        } else {
            p.executableURL = binary
            p.arguments = arguments
            let gone = Pipe()
            try gone.fileHandleForReading.close()
            p.standardOutput = gone
        }
        p.standardError = reader
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: reader.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationReason == .exit ? p.terminationStatus : 128 + p.terminationStatus, text)
    }

    @Test(
        "standard output closed, or its reader gone: the flash is finished and verified, a warning says the output is lost",
        arguments: ["closed", "gone"])
    func aBrokenStandardOutputNeverStopsAFlash(_ stdout: String) throws {
        let state = dir.appendingPathComponent("s-\(stdout)").path
        let file = BitflashBinary.sample("sample-r2-heart.hex").path
        let r = try runWithBrokenOutput(stdout, ["flash", file, "--simulate", "--sim-state", state])
        #expect(r.status == 0, "\(r.stderr.prefix(600))")
        #expect(r.stderr.contains("standard output cannot be written"), "\(r.stderr.prefix(600))")
        #expect(!r.stderr.contains("NSCocoaErrorDomain"), "\(r.stderr.prefix(600))")
        // The board holds the file: the same flash again finds it up to date.
        let again = try BitflashBinary.run(["flash", file, "--simulate", "--sim-state", state, "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains(#""path":"up-to-date""#), "\(again.stdout.suffix(600))")
    }
}
