import NIOCore
import Testing
import Transport
import UDPTransport

/// The UDP backend on its own: endpoints as users write them, one datagram per frame on a bound
/// socket, and the words for a port that is taken or a server that is not there.
@Suite(.timeLimit(.minutes(1)))
struct UDPTransportTests {
    @Test(arguments: ["127.0.0.1:1337", "localhost:0", "[::1]:1337"])
    func endpointsParse(text: String) throws {
        let e = try UDPEndpoint(parsing: text)
        #expect(e.description == text)
    }

    @Test(arguments: ["127.0.0.1", ":1337", "host:port", "127.0.0.1:70000", "[::1]1337", "::1:1337", ""])
    func badEndpointsAreRefusedWithAnExample(text: String) {
        #expect(throws: SMPUDPError.badEndpoint(text)) { try UDPEndpoint(parsing: text) }
        #expect(SMPUDPError.badEndpoint(text).description.contains("127.0.0.1:1337"))
    }

    @Test func aDatagramArrivesWholeWithTheAddressItCameFrom() async throws {
        let a = try await DatagramSocket.bind(host: "127.0.0.1", port: 0)
        let b = try await DatagramSocket.bind(host: "127.0.0.1", port: 0)
        let bPort = try #require(b.port)
        // As large as an SMP frame over UDP may be: 1472 bytes.
        let frame = (0..<UDPSMPTransport.defaultFrameSize).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var incoming = b.datagrams.makeAsyncIterator()
        try await a.send(frame, to: try DatagramSocket.resolve(UDPEndpoint(host: "127.0.0.1", port: bPort)))
        let datagram = try #require(await incoming.next())
        #expect(datagram.bytes == frame)
        #expect(datagram.from.port == a.port)
        await a.close()
        await b.close()
    }

    @Test func aPortInUseIsRefusedAndNamed() async throws {
        let holder = try await DatagramSocket.bind(host: "127.0.0.1", port: 0)
        let port = try #require(holder.port)
        await #expect(throws: SMPUDPError.bindFailed(endpoint: "127.0.0.1:\(port)", reason: .inUse(port: port))) {
            _ = try await DatagramSocket.bind(host: "127.0.0.1", port: port)
        }
        await holder.close()
    }

    @Test func connectReportsAMissingServerInItsMessage() async throws {
        // Bind a socket to learn a free port, then close it: nobody answers there any more.
        let gone = try await DatagramSocket.bind(host: "127.0.0.1", port: 0)
        let endpoint = UDPEndpoint(host: "127.0.0.1", port: try #require(gone.port))
        await gone.close()
        let transport = try await UDPSMPTransport.open(endpoint, probeInterval: .milliseconds(50))
        await #expect(throws: TransportError.self) { try await transport.connect(timeout: .milliseconds(300)) }
        do {
            _ = try await transport.connect(timeout: .milliseconds(200))
            Issue.record("connect succeeded with no server at \(endpoint)")
        } catch {
            #expect("\(error)".contains("no SMP server answered at \(endpoint)"), "\(error)")
        }
        #expect(transport.counters.received == 0)
        await transport.close()
    }
}
