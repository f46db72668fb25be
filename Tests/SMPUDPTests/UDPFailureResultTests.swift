import FirmwareImage
import Flashing
import SampleFirmware
import SimulatedBoard
import SimulatedUDP
import Synchronization
import Testing
import Transport
import UDPTransport

/// A full update over UDP that fails still says what it did: the result of a failure carries
/// the path, the protocol, the bytes sent and the retries, as the same session's result does
/// on a simulated board (docs/json-and-exit-codes.md, "The result").
@Suite struct UDPFailureResultTests {
    @Test("a board whose slot hashes lie fails after the upload: the result says full, mcumgr, bytes and retries")
    func aFailedUpdateSaysWhatItDid() async throws {
        let old = try #require(
            try FlashPlan.make(firmware: UDPUpgradeTests.firmware(.r1, .heart), board: .microbitV2).fullImage)
        let plan = try FlashPlan.make(firmware: UDPUpgradeTests.firmware(.r2, .counter), board: .microbitV2)
        let new = try #require(plan.fullImage)
        var board = try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes)
        board.makeHostile(.wrongSlotHash)
        let server = try await SimulatedUDPServer.start(
            board: board, on: UDPEndpoint(host: "127.0.0.1", port: 0), timeScale: 0.02)
        var options = FlashOptions(mode: .full)
        // Generous limits: the whole test suite shares a small machine, and this runs on its real clock.
        options.mcumgr.requestTimeout = .seconds(60)
        options.mcumgr.firstChunkTimeout = .seconds(120)
        let seen = Mutex<(retries: Int, bytes: Int)>((0, 0))
        let result = await UDPFlash.run(
            plan: plan, options: options, endpoint: server.endpoint, connectTimeout: .seconds(60)
        ) { event in
            seen.withLock {
                switch event.report.worded {
                case .retry: $0.retries += 1
                case let .progress(done, _, .bytes): $0.bytes = max($0.bytes, done)
                default: break
                }
            }
        }
        _ = await server.stop()
        let (retries, bytes) = seen.withLock { $0 }
        #expect(result.error != nil, "the lying board was taken at its word")
        #expect(result.verification == .failed)
        #expect(result.path == .full, "\(result)")
        #expect(result.fullPath == .mcumgr, "\(result)")
        #expect(result.fallback == false)
        // The image went out before the lie was found.
        #expect(bytes >= new.bytes.count, "progress counted \(bytes) of \(new.bytes.count) bytes")
        #expect(result.bytesSent == bytes, "\(result)")
        #expect(result.retries == retries, "\(result)")
    }
}
