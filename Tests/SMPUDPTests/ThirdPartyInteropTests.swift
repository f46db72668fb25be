import FirmwareImage
import Flashing
import Foundation
import SampleFirmware
import UDPTransport
import Testing
import TestSupport

/// `bitflash-lab sim serve --udp` held to the real protocol by third-party SMP clients: smpmgr
/// (smpclient) and mcumgr-toolkit read the image state, upload, test, reset and confirm,
/// and after every step their view of the slots must equal bitflash's own client's view.
@Suite(
    .enabled(
        if: ExternalProcess.bitflash != nil, "bitflash binary not built (.build/debug/bitflash): interop tests skipped"),
    .enabled(if: ThirdPartyClients.python != nil, "python3 not on PATH: interop tests skipped"))
struct ThirdPartyInteropTests {
    /// A served simulated board (the built binary) in a fresh state folder, and the image to upload.
    struct Served {
        var process: ExternalProcess
        var port: Int
        var folder: URL
        var imageFile: URL
        var newHash: String
        var endpoint: UDPEndpoint { UDPEndpoint(host: "127.0.0.1", port: port) }
    }

    static func serve() async throws -> Served {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-udp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let firmware = Firmware(
            fileName: "r2-counter.hex", format: .intelHex,
            sections: [
                .init(
                    family: .nrf52833, image: SampleFirmware.image(family: .nrf52833, runtime: .r2, program: .counter),
                    warnings: [])
            ])
        let image = try #require(try FlashPlan.make(firmware: firmware, board: .microbitV2).fullImage)
        let imageFile = folder.appendingPathComponent("r2-counter.signed.bin")
        try Data(image.bytes).write(to: imageFile)
        let process = try ExternalProcess(
            try #require(ExternalProcess.bitflashLab),
            [
                "sim", "serve", "--udp", "127.0.0.1:0", "--sim-state", folder.appendingPathComponent("state").path,
                "--for", "300", "--time-scale", "0.02"
            ])
        let started = await process.wait(upTo: .seconds(120)) {
            $0.stdout.contains("serving SMP over UDP on") || !$0.isRunning
        }
        let line = process.stdout
        guard started, let range = line.range(of: #"on 127\.0\.0\.1:(\d+)"#, options: .regularExpression),
            let port = Int(line[range].split(separator: ":").last ?? "")
        else {
            await process.stop(within: .seconds(5))
            Issue.record("sim serve did not start: \(process.stdout) \(process.stderr)")
            throw NoAnswerInTime()
        }
        return Served(
            process: process, port: port, folder: folder, imageFile: imageFile,
            newHash: image.hash.map { String(format: "%02x", $0) }.joined())
    }

    /// Runs one client step, then checks that the client's slot list equals bitflash's.
    static func step(
        _ name: String, on served: Served,
        _ run: () async throws -> (status: Int32, stdout: String, stderr: String),
        expectSlots: Bool = true
    ) async throws -> [SlotView] {
        let r = try await run()
        #expect(r.status == 0, "\(name) failed (\(r.status)): \(r.stdout) \(r.stderr)")
        let ours = try await bitflashSlots(at: served.endpoint)
        guard expectSlots else { return ours }
        let theirs = SlotView.fromScript(r.stdout)
        #expect(theirs == ours, "\(name): the client saw \(theirs.map { "\($0)" } ?? "nothing"), bitflash sees \(ours)")
        return ours
    }

    @Test(
        .enabled(
            if: ThirdPartyClients.smpmgrAvailable, "smpmgr not installed (pip install smpmgr): smpmgr interop skipped"))
    func smpmgrSeesTheSameSlotsThroughUploadTestResetConfirm() async throws {
        let s = try await Self.serve()
        defer { try? FileManager.default.removeItem(at: s.folder) }
        let read = { try await ThirdPartyClients.smpmgr(port: s.port, ["image", "state-read"]) }

        let before = try await Self.step("state-read", on: s, read)
        #expect(before.count == 1 && before[0].active && before[0].confirmed)

        _ = try await Self.step(
            "upload", on: s,
            { try await ThirdPartyClients.smpmgr(port: s.port, ["image", "upload", s.imageFile.path]) },
            expectSlots: false)
        let uploaded = try await Self.step("state-read after upload", on: s, read)
        #expect(uploaded.first { $0.slot == 1 }?.hash == s.newHash)

        _ = try await Self.step(
            "test", on: s, { try await ThirdPartyClients.smpmgr(port: s.port, ["image", "state-write", s.newHash]) },
            expectSlots: false)
        let tested = try await Self.step("state-read after test", on: s, read)
        #expect(tested.first { $0.slot == 1 }?.pending == true)

        _ = try await Self.step(
            "reset", on: s, { try await ThirdPartyClients.smpmgr(port: s.port, ["os", "reset"]) }, expectSlots: false)
        let swapped = try await Self.step("state-read after reset", on: s, read)
        let running = try #require(swapped.first { $0.slot == 0 })
        #expect(running.hash == s.newHash && running.active && !running.confirmed)

        _ = try await Self.step(
            "confirm", on: s,
            { try await ThirdPartyClients.smpmgr(port: s.port, ["image", "state-write", "--confirm"]) },
            expectSlots: false)
        let confirmed = try await Self.step("state-read after confirm", on: s, read)
        #expect(confirmed.first { $0.slot == 0 }.map { $0.hash == s.newHash && $0.confirmed } == true)
        #expect(await s.process.stop(within: .seconds(10)) == 0, "\(s.process.stderr)")
    }

    @Test(
        .enabled(
            if: ThirdPartyClients.toolkitAvailable,
            "mcumgr-toolkit not installed (pip install mcumgr-toolkit): its interop skipped"))
    func mcumgrToolkitSeesTheSameSlotsThroughUploadTestResetConfirm() async throws {
        let s = try await Self.serve()
        defer { try? FileManager.default.removeItem(at: s.folder) }
        let tool = { (args: [String]) in { try await ThirdPartyClients.toolkit(port: s.port, args) } }

        let before = try await Self.step("state", on: s, tool(["state"]))
        #expect(before.count == 1 && before[0].active && before[0].confirmed)
        let uploaded = try await Self.step("upload", on: s, tool(["upload", s.imageFile.path]))
        #expect(uploaded.first { $0.slot == 1 }?.hash == s.newHash)
        let tested = try await Self.step("test", on: s, tool(["test", s.newHash]))
        #expect(tested.first { $0.slot == 1 }?.pending == true)
        _ = try await Self.step("reset", on: s, tool(["reset"]), expectSlots: false)
        let swapped = try await Self.step("state after reset", on: s, tool(["state"]))
        #expect(swapped.first { $0.slot == 0 }.map { $0.hash == s.newHash && $0.active && !$0.confirmed } == true)
        let confirmed = try await Self.step("confirm", on: s, tool(["confirm"]))
        #expect(confirmed.first { $0.slot == 0 }.map { $0.hash == s.newHash && $0.confirmed } == true)
        #expect(await s.process.stop(within: .seconds(10)) == 0, "\(s.process.stderr)")
    }
}
