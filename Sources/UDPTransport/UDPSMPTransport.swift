import NIOCore
import SMP
import Transport

/// SMP over UDP as a `BLETransport`, so the McuMgr upgrade runs unchanged on Zephyr's
/// UDP transport (port 1337): a write to the SMP characteristic is sent as one datagram
/// (it must hold one whole SMP frame), and each datagram from the server arrives as a
/// notification.
///
/// UDP has no link. `connect` probes the server with an OS echo until it answers (after a
/// reset that is when the board is back from its swap); `disconnect` only reports a
/// `localTerminated` drop to the flow. Run `McuMgrUpgrade` with `useReassembly = false`:
/// the connection's MTU is `frameSize + 3`, so every frame fits one write.
public final class UDPSMPTransport: BLETransport {
    /// The largest frame sent: 1472 bytes (an Ethernet MTU less the IP and UDP headers), the
    /// figure smpclient uses; the server's `buf_size` lowers it further.
    public static let defaultFrameSize = 1472

    public let endpoint: UDPEndpoint
    public let frameSize: Int
    /// Pause between two probes while `connect` waits for the server.
    public let probeInterval: Duration
    private let socket: DatagramSocket
    private let remote: SocketAddress
    private let state = Locked(State())
    private let reader: Task<Void, Never>

    private struct State {
        var notify: AsyncStream<[UInt8]>.Continuation?
        var disconnects: [AsyncStream<DisconnectReason>.Continuation] = []
        var probeAnswers = 0
        var datagramsSent = 0
        var datagramsReceived = 0
    }

    /// Opens a socket for talking to `endpoint` (bound to the loopback address when the
    /// server is on it, else to every address, on any free port). Nothing is sent yet.
    public static func open(
        _ endpoint: UDPEndpoint, frameSize: Int = defaultFrameSize,
        probeInterval: Duration = .milliseconds(200)
    ) async throws(SMPUDPError) -> UDPSMPTransport {
        let remote = try DatagramSocket.resolve(endpoint)
        let local: String
        switch remote {
        case .v6: local = endpoint.host == "::1" ? "::1" : "::"
        default: local = endpoint.host.hasPrefix("127.") || endpoint.host == "localhost" ? "127.0.0.1" : "0.0.0.0"
        }
        let socket = try await DatagramSocket.bind(host: local, port: 0)
        return UDPSMPTransport(
            endpoint: endpoint, frameSize: max(frameSize, 64), probeInterval: probeInterval,
            socket: socket, remote: remote)
    }

    private init(
        endpoint: UDPEndpoint, frameSize: Int, probeInterval: Duration, socket: DatagramSocket, remote: SocketAddress
    ) {
        self.endpoint = endpoint
        self.frameSize = frameSize
        self.probeInterval = probeInterval
        self.socket = socket
        self.remote = remote
        let state = self.state
        reader = Task { [socket] in
            for await datagram in socket.datagrams where datagram.from == remote {
                let bytes = datagram.bytes
                state.withLock { s in
                    s.datagramsReceived += 1
                    if Self.isProbeAnswer(bytes) { s.probeAnswers += 1 } else { s.notify?.yield(bytes) }
                }
            }
        }
    }

    deinit { reader.cancel() }

    /// Datagrams sent and received so far (probes included).
    public var counters: (sent: Int, received: Int) { state.withLock { ($0.datagramsSent, $0.datagramsReceived) } }

    /// Closes the socket. The transport cannot be used afterwards.
    public func close() async {
        state.withLock { s in
            s.notify?.finish()
            s.notify = nil
            for c in s.disconnects { c.finish() }
            s.disconnects = []
        }
        await socket.close()
        reader.cancel()
    }

    public func connect(timeout: Duration) async throws -> ConnectionInfo {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        let before = state.withLock { $0.probeAnswers }
        while clock.now < deadline {
            try Task.checkCancellation()
            try await sendDatagram(Self.probe)
            let wait = clock.now.advanced(by: probeInterval)
            while clock.now < min(wait, deadline) {
                if state.withLock({ $0.probeAnswers }) > before {
                    return ConnectionInfo(
                        services: [SMPGATT.service], mtu: frameSize + 3, name: endpoint.description)
                }
                try await clock.sleep(for: .milliseconds(5))
            }
        }
        throw TransportError.connectFailed(
            SMPUDPError.noAnswer(endpoint: endpoint.description, after: timeout).description)
    }

    public func disconnect() async {
        state.withLock { s in for c in s.disconnects { c.yield(.localTerminated) } }
    }

    public func characteristics(of service: BLEUUID, timeout: Duration) async throws -> [BLEUUID] {
        guard service == SMPGATT.service else { throw TransportError.serviceNotFound(service) }
        return [SMPGATT.characteristic.characteristic]
    }

    public func write(_ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind, timeout: Duration)
        async throws
    {
        guard characteristic == SMPGATT.characteristic else {
            throw TransportError.characteristicNotFound(characteristic)
        }
        guard bytes.count <= frameSize else {
            throw TransportError.failed(
                operation: "UDP send", message: "\(bytes.count) bytes exceed the frame size \(frameSize)")
        }
        try await sendDatagram(bytes)
    }

    public func read(_ characteristic: GATTCharacteristic, timeout: Duration) async throws -> [UInt8] {
        throw TransportError.failed(
            operation: "read \(characteristic)", message: "SMP over UDP has no readable characteristic")
    }

    public func notifications(of characteristic: GATTCharacteristic) -> AsyncStream<[UInt8]> {
        let (stream, sink) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(64))
        guard characteristic == SMPGATT.characteristic else {
            sink.finish()
            return stream
        }
        state.withLock { s in
            s.notify?.finish()
            s.notify = sink
        }
        return stream
    }

    public func enableNotifications(_ characteristic: GATTCharacteristic, timeout: Duration) async throws {
        guard characteristic == SMPGATT.characteristic else {
            throw TransportError.characteristicNotFound(characteristic)
        }
    }

    public func disconnects() -> AsyncStream<DisconnectReason> {
        let (stream, sink) = AsyncStream<DisconnectReason>.makeStream(bufferingPolicy: .bufferingNewest(8))
        state.withLock { $0.disconnects.append(sink) }
        return stream
    }

    public var mtu: Int { get async { frameSize + 3 } }

    private func sendDatagram(_ bytes: [UInt8]) async throws {
        do {
            try await socket.send(bytes, to: remote)
            state.withLock { $0.datagramsSent += 1 }
        } catch {
            throw TransportError.failed(operation: "UDP send to \(endpoint)", message: error.description)
        }
    }

    /// The probe: an SMP v1 OS echo (`{"d": "bitflash"}`), sequence 0xFF. The upgrade never sends
    /// echo, so every echo answer from the server is a probe answer.
    static let probe: [UInt8] =
        (try? SMPFrame(request: EchoRequest(text: "bitflash"), version: .v1, sequence: 0xFF).encoded())
        ?? []

    static func isProbeAnswer(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= SMPHeader.size else { return false }
        let op = bytes[0] & 0x07
        return (op == 1 || op == 3) && bytes[4] == 0 && bytes[5] == 0 && bytes[7] == EchoRequest.command
    }
}
