import Foundation
import Testing
import TestSupport

/// What no run may do to a folder of simulated boards: serve a board while another run flashes
/// it (the later save drops the flash), write through a lock file that is a link, or put a trace
/// where a board's file is.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct StateFolderSafetyTests {
    let state: URL
    init() throws { state = try BitflashBinary.temporaryDirectory() }

    /// A simulated flash; with `--trace`, in the laboratory (`bitflash-lab`), whose option it is.
    func flash(_ profile: String, wait: String = "0.3", extra: [String] = []) throws -> BitflashBinary.Result {
        try (extra.contains("--trace") ? BitflashBinary.lab : BitflashBinary.run)(
            [
                "flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", profile, "--sim-state",
                state.path, "--sim-state-wait", wait
            ] + extra, [:])
    }

    @Test("sim serve --udp holds the folder while it serves: a flash meanwhile is refused with 75, the board is kept")
    func udpServerHoldsTheFolder() async throws {
        let binary = try #require(BitflashBinary.labURL)
        let serve = try ExternalProcess(
            binary, ["sim", "serve", "--udp", "127.0.0.1:0", "--sim-state", state.path, "--for", "600"])
        // Waits on the thread this test holds: an await would need a free thread of the shared pool,
        // which the suites' synchronous runs may hold for longer than the server serves.
        let ready = serve.blockingWait(upTo: .seconds(120)) { $0.stdout.contains("serving SMP") || !$0.isRunning }
        #expect(ready && serve.isRunning, "\(serve.stderr)")
        let meanwhile = try flash("microbit-v2-mcuboot")
        #expect(meanwhile.status == 75, "\(meanwhile.stderr)")
        #expect(meanwhile.stderr.contains("in use by another bitflash run"), "\(meanwhile.stderr)")
        #expect(await serve.stop(within: .seconds(60)) == 0, "\(serve.stderr)")
        #expect(serve.stdout.contains("board saved"), "\(serve.stdout)")
        // Once it has stopped, the folder is free again.
        #expect(try flash("microbit-v2-mcuboot").status == 0)
    }

    @Test(
        "sim bluez holds the folder while it serves: a flash meanwhile is refused with 75",
        .enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
    func fakeBlueZHoldsTheFolder() async throws {
        let binary = try #require(BitflashBinary.labURL)
        let bus = try PrivateBus()
        let fake = try ExternalProcess(
            binary, ["sim", "bluez", "--sim-state", state.path, "--bus", bus.address, "--for", "600"])
        let ready = fake.blockingWait(upTo: .seconds(120)) {
            $0.stdout.contains("fake org.bluez ready") || !$0.isRunning
        }
        #expect(ready && fake.isRunning, "\(fake.stderr)")
        let meanwhile = try flash("microbit-v2")
        #expect(meanwhile.status == 75, "\(meanwhile.stderr)")
        #expect(meanwhile.stderr.contains("in use by another bitflash run"), "\(meanwhile.stderr)")
        #expect(await fake.stop(within: .seconds(60)) == 0, "\(fake.stderr)")
    }

    @Test("a lock file that is a symbolic link is refused (73), and the file it names is left as it was")
    func aLinkedLockFileIsRefused() throws {
        let victim = state.appendingPathComponent("victim.txt")
        try Data("keep me\n".utf8).write(to: victim)
        let boards = state.appendingPathComponent("boards")
        try FileManager.default.createDirectory(at: boards, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: boards.appendingPathComponent("bitflash.lock").path, withDestinationPath: victim.path)
        for arguments in [
            ["sim", "reset", "--sim-state", boards.path],
            [
                "flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", "--sim-state", boards.path
            ]
        ] {
            let r = try (arguments.contains("--trace") ? BitflashBinary.lab : BitflashBinary.run)(arguments, [:])
            #expect(r.status == 73, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("bitflash.lock is a symbolic link"), "\(r.stderr)")
        }
        #expect(try String(contentsOf: victim, encoding: .utf8) == "keep me\n")
    }

    @Test("a trace onto a board's file or the lock in the state folder is refused before anything is flashed (64)")
    func aTraceOntoTheStateIsRefused() throws {
        #expect(try flash("microbit-v2").status == 0)
        let board = state.appendingPathComponent("sim.json")
        let before = try Data(contentsOf: board)
        for target in ["sim.json", "bitflash.lock", "other.json"] {
            let r = try flash("microbit-v2", extra: ["--trace", state.appendingPathComponent(target).path])
            #expect(r.status == 64, "\(target): \(r.stderr)")
            #expect(r.stderr.contains("is in the folder of the simulated boards"), "\(r.stderr)")
        }
        #expect(try Data(contentsOf: board) == before)
        #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("other.json").path))
    }

    @Test("an output that is a symbolic link is refused (73), and the file it names is left as it was")
    func outputsDoNotFollowLinks() throws {
        let victim = state.appendingPathComponent("victim.hex")
        try Data("keep me\n".utf8).write(to: victim)
        let link = state.appendingPathComponent("out.hex")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: victim.path)
        let input = BitflashBinary.sample("sample-r1-heart.hex").path
        for arguments in [
            ["convert", input, "--board", "microbit-v1", "--to", "hex", "-o", link.path],
            ["flash", input, "--simulate", "--sim-state", state.appendingPathComponent("s").path, "--trace", link.path]
        ] {
            let r = try (arguments.contains("--trace") ? BitflashBinary.lab : BitflashBinary.run)(arguments, [:])
            #expect(r.status == 73, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("\(link.path) is a symbolic link"), "\(r.stderr)")
        }
        #expect(try String(contentsOf: victim, encoding: .utf8) == "keep me\n")
    }

    @Test("a board file the disk cannot take (ulimit -f): 73, the cause in plain words, no Foundation error text")
    func aBoardThatCannotBeSavedSaysWhyInPlainWords() throws {
        let binary = try #require(BitflashBinary.url).path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        // 100 blocks of 512 bytes: less than a board's file, so its save fails as on a full disk.
        p.arguments = [
            "-c", #"ulimit -f 100; exec "$0" "$@""#, binary, "flash",
            BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", "--sim-state", state.path
        ]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 73, "\(text)")
        #expect(text.contains("cannot save the simulated board") && text.contains("file too large"), "\(text)")
        #expect(!text.contains("NSCocoaErrorDomain") && !text.contains("NSPOSIXErrorDomain"), "\(text)")
    }
}
