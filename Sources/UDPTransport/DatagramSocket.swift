#if canImport(Glibc)
    import Glibc
#endif
import NIOCore
import NIOPosix
import Synchronization

/// One bound UDP socket (swift-nio), as an async stream of datagrams in and a send call out.
/// The only place NIO is touched; the client transport and the simulated server build on it.
package final class DatagramSocket: Sendable {
    /// A datagram and where it came from.
    package struct Datagram: Sendable {
        package var from: SocketAddress
        package var bytes: [UInt8]
    }

    package let channel: any Channel
    /// Every datagram received, until `close()`.
    package let datagrams: AsyncStream<Datagram>
    package let localAddress: SocketAddress?

    private init(channel: any Channel, datagrams: AsyncStream<Datagram>) {
        self.channel = channel
        self.datagrams = datagrams
        self.localAddress = channel.localAddress
    }

    /// Binds a socket to `host:port` (port 0: any free port).
    package static func bind(host: String, port: Int) async throws(SMPUDPError) -> DatagramSocket {
        // Bounded: a peer that floods us loses its oldest datagrams, as a real socket buffer would.
        let (stream, sink) = AsyncStream<Datagram>.makeStream(bufferingPolicy: .bufferingNewest(256))
        do {
            let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(Forwarder(sink: sink))
                    }
                }
                .bind(host: host, port: port).get()
            return DatagramSocket(channel: channel, datagrams: stream)
        } catch let error as SocketAddressError.UnknownHost {
            sink.finish()
            throw .unknownHost(host: host, detail: error.errorDescription)
        } catch {
            sink.finish()
            let reason: BindFailure
            switch (error as? IOError)?.errnoCode {
            case EADDRINUSE: reason = .inUse(port: port)
            case EADDRNOTAVAIL: reason = .notLocal(host: host)
            case EACCES: reason = .notPermitted(port: port)
            default: reason = .other("\(error)")
            }
            throw .bindFailed(endpoint: UDPEndpoint(host: host, port: port).description, reason: reason)
        }
    }

    /// The local port the socket is bound to.
    package var port: Int? { localAddress?.port }

    /// Sends one datagram.
    package func send(_ bytes: [UInt8], to address: SocketAddress) async throws(SMPUDPError) {
        let buffer = channel.allocator.buffer(bytes: bytes)
        do {
            try await channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: buffer)).get()
        } catch {
            throw .closed
        }
    }

    /// Closes the socket; the datagram stream ends.
    package func close() async {
        try? await channel.close().get()
    }

    /// Resolves `host:port` to a socket address.
    package static func resolve(_ endpoint: UDPEndpoint) throws(SMPUDPError) -> SocketAddress {
        do {
            return try SocketAddress.makeAddressResolvingHost(endpoint.host, port: endpoint.port)
        } catch let error as SocketAddressError.UnknownHost {
            throw .unknownHost(host: endpoint.host, detail: error.errorDescription)
        } catch {
            throw .badEndpoint(endpoint.description)
        }
    }
}

/// Hands each received datagram to the socket's stream.
private final class Forwarder: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let sink: AsyncStream<DatagramSocket.Datagram>.Continuation

    init(sink: AsyncStream<DatagramSocket.Datagram>.Continuation) { self.sink = sink }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        sink.yield(.init(from: envelope.remoteAddress, bytes: Array(envelope.data.readableBytesView)))
    }

    func channelInactive(context: ChannelHandlerContext) {
        sink.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A datagram socket reports ICMP "port unreachable" as an error: not fatal, the
        // client's request timer notices the missing answer.
    }
}

/// A `Mutex` in a class, so that tasks can share it.
package final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    package init(_ value: Value) { mutex = Mutex(value) }
    package func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
