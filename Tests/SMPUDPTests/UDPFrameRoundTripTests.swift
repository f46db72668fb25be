import FirmwareImage
import Flashing
import SampleFirmware
import SimulatedBoard
import SimulatedUDP
import SMP
import UDPTransport
import Testing
import Transport

/// SMP frames over loopback UDP: the client transport against the simulated board's server.
@Suite struct UDPFrameRoundTripTests {
    /// An MCUboot board running the sample runtime r1 with the heart program.
    static func board() throws -> (board: SimulatedBoard, image: McuMgrUpgradeImageBytes) {
        let firmware = Firmware(
            fileName: "r1-heart.hex", format: .intelHex,
            sections: [
                .init(
                    family: .nrf52833, image: SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart),
                    warnings: [])
            ])
        let app = try #require(try FlashPlan.make(firmware: firmware, board: .microbitV2).fullImage)
        return (
            try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: app.bytes),
            McuMgrUpgradeImageBytes(bytes: app.bytes, hash: app.hash)
        )
    }

    /// Sends one request and waits (bounded) for the datagram that answers it.
    static func ask<R: SMPRequest>(
        _ request: R, sequence: UInt8, over transport: UDPSMPTransport,
        answers: inout AsyncStream<[UInt8]>.Iterator
    ) async throws -> SMPFrame {
        try await transport.write(
            try SMPFrame(request: request, sequence: sequence).encoded(), to: SMPGATT.characteristic,
            kind: .command, timeout: .seconds(2))
        for _ in 0..<8 {
            guard let bytes = await answers.next() else { break }
            let frame = try SMPFrame(bytes: bytes)
            if frame.header.sequence == sequence { return frame }
        }
        throw SMPUDPError.noAnswer(endpoint: transport.endpoint.description, after: .seconds(2))
    }

    @Test func stateReadAndParamsTravelAsWholeDatagrams() async throws {
        let (board, image) = try Self.board()
        let server = try await SimulatedUDPServer.start(
            board: board, on: UDPEndpoint(host: "127.0.0.1", port: 0), timeScale: 0)
        let transport = try await UDPSMPTransport.open(server.endpoint)
        let info = try await transport.connect(timeout: .seconds(60))
        #expect(info.services == [SMPGATT.service])
        #expect(info.mtu == UDPSMPTransport.defaultFrameSize + 3)
        var answers = transport.notifications(of: SMPGATT.characteristic).makeAsyncIterator()
        try await transport.enableNotifications(SMPGATT.characteristic, timeout: .seconds(1))

        let params = try await Self.ask(MCUmgrParametersRequest(), sequence: 7, over: transport, answers: &answers)
        let figures = try params.response(as: MCUmgrParametersResponse.self)
        #expect(figures.bufferSize == board.smpServer?.configuration.bufferSize)
        #expect(figures.bufferCount == board.smpServer?.configuration.bufferCount)

        let state = try await Self.ask(ImageStateReadRequest(), sequence: 8, over: transport, answers: &answers)
        #expect(state.header.operation == .readResponse)
        let slots = try state.response(as: ImageStateResponse.self).images
        let primary = try #require(slots.first { $0.slot == 0 })
        #expect(primary.hash == image.hash)
        #expect(primary.active && primary.confirmed)
        #expect(!slots.contains { $0.slot == 1 })

        await transport.close()
        _ = await server.stop()
        #expect(server.counters.datagramsIn == server.counters.datagramsOut)
        #expect(server.counters.datagramsIn >= 3)
    }
}

/// The image bytes and its hash TLV.
struct McuMgrUpgradeImageBytes {
    var bytes: [UInt8]
    var hash: [UInt8]
}
