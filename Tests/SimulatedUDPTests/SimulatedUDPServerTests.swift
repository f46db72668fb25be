import FirmwareImage
import Flashing
import NIOCore
import SMP
import SampleFirmware
import SimulatedBoard
import SimulatedUDP
import Testing
import UDPTransport

/// The simulated board's SMP server over UDP, as Zephyr's `smp_svr` with the UDP transport
/// serves it: one request frame per datagram, one answer datagram to the address the request
/// came from, and a reset that takes the board down until it boots.
@Suite(.timeLimit(.minutes(1)))
struct SimulatedUDPServerTests {
    /// A micro:bit V2 with McuMgr whose primary slot holds runtime r1 with the heart program.
    static func board(configure: (inout SMPServerConfiguration) -> Void = { _ in }) throws -> SimulatedBoard {
        let firmware = Firmware(
            fileName: "r1-heart.hex", format: .intelHex,
            sections: [
                .init(
                    family: .nrf52833, image: SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart),
                    warnings: [])
            ])
        let app = try #require(try FlashPlan.make(firmware: firmware, board: .microbitV2).fullImage)
        return try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: app.bytes, configure: configure)
    }

    /// A client socket, the server's address, and the client's incoming datagrams.
    static func client(of server: SimulatedUDPServer) async throws -> (
        socket: DatagramSocket, to: SocketAddress, incoming: AsyncStream<DatagramSocket.Datagram>.Iterator
    ) {
        let socket = try await DatagramSocket.bind(host: "127.0.0.1", port: 0)
        return (socket, try DatagramSocket.resolve(server.endpoint), socket.datagrams.makeAsyncIterator())
    }

    @Test func eachRequestDatagramIsAnsweredByOneDatagramToItsSender() async throws {
        let board = try Self.board()
        let server = try await SimulatedUDPServer.start(
            board: board, on: UDPEndpoint(host: "127.0.0.1", port: 0), timeScale: 0)
        let (socket, to, iterator) = try await Self.client(of: server)
        var incoming = iterator
        try await socket.send(try SMPFrame(request: MCUmgrParametersRequest(), sequence: 42).encoded(), to: to)
        let answer = try #require(await incoming.next())
        #expect(answer.from.port == server.endpoint.port)
        let frame = try SMPFrame(bytes: answer.bytes)
        #expect(frame.header.sequence == 42)
        let figures = try frame.response(as: MCUmgrParametersResponse.self)
        #expect(figures.bufferSize == board.smpServer?.configuration.bufferSize)
        await socket.close()
        _ = await server.stop()
        #expect(server.counters.datagramsIn == 1 && server.counters.datagramsOut == 1)
        #expect(server.counters.dropped == 0 && server.counters.resets == 0)
    }

    @Test func aResetIsAnsweredThenTheBoardIsDownDropsDatagramsAndStopFinishesTheReset() async throws {
        let (notes, noteSink) = AsyncStream<String>.makeStream()
        // The reset at once after its answer (Zephyr waits CONFIG_MCUMGR_GRP_OS_RESET_MS), and the
        // time down played 100 times slower than modelled: the board is still down when looked at.
        let board = try Self.board(configure: { $0.resetDelay = .zero })
        let server = try await SimulatedUDPServer.start(
            board: board, on: UDPEndpoint(host: "127.0.0.1", port: 0), timeScale: 100, onNote: { noteSink.yield($0) })
        let (socket, to, iterator) = try await Self.client(of: server)
        var incoming = iterator
        var noted = notes.makeAsyncIterator()
        try await socket.send(try SMPFrame(request: ResetRequest(), sequence: 3).encoded(), to: to)
        let answer = try #require(await incoming.next())
        #expect(try SMPFrame(bytes: answer.bytes).header.sequence == 3)
        while let note = await noted.next(), !note.hasPrefix("reset: the board is back in") {}
        #expect(server.isResetting)
        try await socket.send(try SMPFrame(request: MCUmgrParametersRequest(), sequence: 4).encoded(), to: to)
        while let note = await noted.next(), !note.hasSuffix("dropped: the board is resetting") {}
        #expect(server.counters.dropped == 1)
        await socket.close()
        let after = await server.stop()
        #expect(!server.isResetting, "stop completes a reset in progress")
        #expect(after.mode == .application)
        #expect(server.counters.resets == 1 && server.counters.datagramsOut == 1)
    }
}
