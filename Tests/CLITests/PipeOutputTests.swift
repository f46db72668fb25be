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
}
