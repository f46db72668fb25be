import FirmwareImage
import Flashing
import Foundation
import SampleFirmware
import Testing
import TestSupport

/// `bitflash flash FILE --udp HOST:PORT` against `bitflash-lab sim serve --udp`, both the built binary.
@Suite(
    .enabled(
        if: ExternalProcess.bitflash != nil,
        "bitflash binary not built (.build/debug/bitflash): UDP command-line tests skipped"))
struct UDPCommandLineTests {
    /// The result object of `--json` output (its last line).
    static func result(_ stdout: String) throws -> [String: Any] {
        let line = try #require(stdout.split(separator: "\n").last { $0.contains(#""type":"result""#) })
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func flashOverUDPUpdatesTheServedBoardThenFindsItUpToDate() async throws {
        let served = try await ThirdPartyInteropTests.serve()
        defer { try? FileManager.default.removeItem(at: served.folder) }
        let bitflash = try #require(ExternalProcess.bitflash)
        let target = "127.0.0.1:\(served.port)"

        let first = try await ExternalProcess.run(
            bitflash, ["flash", served.imageFile.path, "--udp", target, "--json"], timeout: .seconds(300))
        #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
        let r1 = try Self.result(first.stdout)
        #expect(r1["path"] as? String == "full")
        #expect(r1["verified"] as? Bool == true)
        #expect((r1["bytesSent"] as? Int ?? 0) > 0)
        #expect(first.stdout.contains(#""phase":"reset""#))

        let slots = try await bitflashSlots(at: served.endpoint)
        #expect(
            slots.first { $0.slot == 0 }.map { $0.hash == served.newHash && $0.active && $0.confirmed } == true,
            "\(slots)")

        // The same image again: the device already runs it, confirmed; nothing is uploaded.
        let second = try await ExternalProcess.run(
            bitflash, ["flash", served.imageFile.path, "--udp", target, "--json"], timeout: .seconds(300))
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try Self.result(second.stdout)["bytesSent"] as? Int == 0)
        #expect(await served.process.stop(within: .seconds(10)) == 0)
        #expect(served.process.stdout.contains("1 reset"), "\(served.process.stdout)")
    }

    @Test func flashOverUDPWithoutAServerExits69AndSaysWhatToStart() async throws {
        let served = try await ThirdPartyInteropTests.serve()
        defer { try? FileManager.default.removeItem(at: served.folder) }
        await served.process.stop(within: .seconds(10))
        let bitflash = try #require(ExternalProcess.bitflash)
        let r = try await ExternalProcess.run(
            bitflash, ["flash", served.imageFile.path, "--udp", "127.0.0.1:\(served.port)"],
            timeout: .seconds(300))
        #expect(r.status == 69, "\(r.stdout) \(r.stderr)")
        #expect((r.stdout + r.stderr).contains("bitflash-lab sim serve --udp 127.0.0.1:\(served.port)"))
    }

    @Test func badUDPEndpointIsAUsageError() async throws {
        let bitflash = try #require(ExternalProcess.bitflash)
        let r = try await ExternalProcess.run(
            bitflash, ["flash", "any.hex", "--udp", "localhost"], timeout: .seconds(30))
        #expect(r.status == 64)
        #expect(r.stderr.contains("is not HOST:PORT"), "\(r.stderr)")
    }
}
