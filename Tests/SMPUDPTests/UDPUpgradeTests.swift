import FirmwareImage
import Flashing
import McuMgr
import SampleFirmware
import SimulatedBoard
import SimulatedUDP
import SMP
import UDPTransport
import Testing

/// A whole McuMgr update over UDP against the simulated server in this process.
@Suite struct UDPUpgradeTests {
    static func firmware(_ runtime: SampleFirmware.RuntimeID, _ program: SampleFirmware.ProgramID) -> Firmware {
        Firmware(
            fileName: "\(runtime)-\(program).hex", format: .intelHex,
            sections: [
                .init(
                    family: .nrf52833,
                    image: SampleFirmware.image(family: .nrf52833, runtime: runtime, program: program), warnings: [])
            ])
    }

    @Test(arguments: [McuMgrUpgradeMode.testAndConfirm, .confirmOnly])
    func aNewRuntimeIsUploadedSwappedAndConfirmedByteExact(mode: McuMgrUpgradeMode) async throws {
        let old = try #require(try FlashPlan.make(firmware: Self.firmware(.r1, .heart), board: .microbitV2).fullImage)
        let plan = try FlashPlan.make(firmware: Self.firmware(.r2, .counter), board: .microbitV2)
        let new = try #require(plan.fullImage)
        #expect(new.hash != old.hash)
        let board = try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes)
        let server = try await SimulatedUDPServer.start(
            board: board, on: UDPEndpoint(host: "127.0.0.1", port: 0), timeScale: 0.02)

        var options = FlashOptions(mode: .full)
        options.mcumgr.mode = mode
        // Generous limits: the whole test suite shares a small machine, and this runs on its real clock.
        options.mcumgr.requestTimeout = .seconds(60)
        options.mcumgr.firstChunkTimeout = .seconds(120)
        let result = await UDPFlash.run(
            plan: plan, options: options, endpoint: server.endpoint, connectTimeout: .seconds(60))
        let after = await server.stop()

        #expect(result.error == nil, "\(result.error ?? "")")
        #expect(result.path == .full)
        #expect(result.verified)
        #expect(result.bytesSent >= new.bytes.count)
        // One reset, or two when a slow machine made the flow ask again before the answer arrived.
        #expect((1...2).contains(server.counters.resets))
        // The primary slot holds the new image byte for byte; the old one is in the secondary slot.
        let slot = try #require(after.smpServer?.configuration.primarySlot)
        let primary = try after.readFlash(slot.lowerBound..<(slot.lowerBound + UInt32(new.bytes.count)))
        #expect(primary == new.bytes)
        let server0 = try #require(after.smpServer)
        #expect(Array(server0.secondary.prefix(old.bytes.count)) == old.bytes)
        let states = try #require(after.smpSlotStates)
        let running = try #require(states.first { $0.slot == 0 })
        #expect(running.hash == new.hash && running.active && running.confirmed)
    }

    @Test func theUpgradeReportsAStoppedServerAsNotFound() async throws {
        let board = try SimulatedBoard.mcuMgrBoard(
            .microbitV2,
            primary: try #require(
                try FlashPlan.make(firmware: Self.firmware(.r1, .heart), board: .microbitV2).fullImage
            ).bytes)
        let server = try await SimulatedUDPServer.start(board: board, on: UDPEndpoint(host: "127.0.0.1", port: 0))
        let endpoint = server.endpoint
        _ = await server.stop()
        let plan = try FlashPlan.make(firmware: Self.firmware(.r2, .heart), board: .microbitV2)
        let result = await UDPFlash.run(plan: plan, endpoint: endpoint, connectTimeout: .milliseconds(500))
        #expect(result.path == nil)
        #expect(result.error?.contains("no SMP server answered at \(endpoint)") == true, "\(result.error ?? "")")
    }
}
