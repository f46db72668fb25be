import Foundation
import Testing
import TestSupport

/// libdbus is opened by the commands that talk to BlueZ and by no other: `inspect` and
/// `--version` start without it and the libraries it pulls in. The dynamic loader's own log
/// (`LD_DEBUG=files`, on standard error) names every file it maps, linked or opened later.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct LibDBusLoadingTests {
    static let loaderLog = ["LD_DEBUG": "files"]
    static let libdbus = "libdbus-1.so.3"

    @Test func inspectNeverLoadsLibDBus() throws {
        let file = BitflashBinary.sample("sample-r2-heart.hex")
        let r = try BitflashBinary.run(["inspect", file.path], environment: Self.loaderLog)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("MakeCode magic:"))
        // The loader did log (it names the C library every process maps), and libdbus is not in it.
        #expect(r.stderr.contains("libc.so.6"), "no loader log: \(r.stderr.prefix(300))")
        #expect(!r.stderr.contains(Self.libdbus))
    }

    @Test func versionNeverLoadsLibDBus() throws {
        let r = try BitflashBinary.run(["--version"], environment: Self.loaderLog)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("bitflash "))
        #expect(r.stderr.contains("libc.so.6"), "no loader log: \(r.stderr.prefix(300))")
        #expect(!r.stderr.contains(Self.libdbus))
    }

    @Test func scanLoadsLibDBusToReachTheBus() async throws {
        // A bus that answers garbage: scan opens libdbus, connects, and ends with 75.
        let socket = try BrokenBusSocket(.garbage)
        var environment = Self.loaderLog
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = socket.address
        let r = try await ExternalProcess.run(
            try #require(BitflashBinary.url), ["scan", "--timeout", "2"], timeout: .seconds(60),
            environment: environment)
        #expect(r.status == 75, "\(r.stderr.suffix(600))")
        #expect(r.stderr.contains(Self.libdbus))
        #expect(r.stderr.contains("Bluetooth is not available"))
    }
}
