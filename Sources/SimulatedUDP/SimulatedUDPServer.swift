import NIOCore
import SimulatedBoard
import UDPTransport

/// A simulated board serving its McuMgr SMP service over UDP in real time, the way a Zephyr
/// `smp_svr` build with the UDP transport does (port 1337): each datagram is one request
/// frame, each response leaves as one datagram to the address the last request came from.
///
/// Device work (command handling, page erases, word writes) and the reset with MCUboot's
/// swap take their modelled durations multiplied by `timeScale` on the real clock: 1 plays
/// them at the modelled speed, 0 performs them at once. Datagrams that arrive while the
/// board resets are dropped, as a rebooting device would.
public final class SimulatedUDPServer: Sendable {
    /// Bytes and datagrams the server saw.
    public struct Counters: Sendable, Equatable {
        public var datagramsIn = 0
        public var datagramsOut = 0
        public var dropped = 0
        public var resets = 0
    }

    private enum Input: Sendable {
        case datagram(DatagramSocket.Datagram)
        case work(DatagramBoardHost.Work)
        case boot
        case stop
    }

    private struct State: Sendable {
        var host: DatagramBoardHost
        var peer: SocketAddress?
        var counters = Counters()
    }

    /// The address the server is bound to.
    public let endpoint: UDPEndpoint
    public let timeScale: Double
    private let socket: DatagramSocket
    private let state: Locked<State>
    private let inputs: AsyncStream<Input>.Continuation
    private let loop: Task<Void, Never>
    private let forwarder: Task<Void, Never>

    /// Binds `endpoint` (port 0: any free port) and starts serving `board`.
    /// `onNote` receives the board's trace lines (for `-v`).
    public static func start(
        board: SimulatedBoard, on endpoint: UDPEndpoint, timeScale: Double = 1,
        onNote: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws(SMPUDPError) -> SimulatedUDPServer {
        let socket = try await DatagramSocket.bind(host: endpoint.host, port: endpoint.port)
        let bound = UDPEndpoint(host: endpoint.host, port: socket.port ?? endpoint.port)
        return SimulatedUDPServer(
            board: board, socket: socket, endpoint: bound, timeScale: max(0, timeScale), onNote: onNote)
    }

    private init(
        board: SimulatedBoard, socket: DatagramSocket, endpoint: UDPEndpoint, timeScale: Double,
        onNote: @escaping @Sendable (String) -> Void
    ) {
        self.endpoint = endpoint
        self.timeScale = timeScale
        self.socket = socket
        let state = Locked(State(host: DatagramBoardHost(board: board)))
        self.state = state
        let (stream, sink) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
        inputs = sink
        forwarder = Task {
            for await datagram in socket.datagrams { sink.yield(.datagram(datagram)) }
        }
        loop = Task {
            for await input in stream {
                let step: DatagramBoardHost.Step
                let peer: SocketAddress?
                switch input {
                case let .datagram(d):
                    (step, peer) = state.withLock { s in
                        s.counters.datagramsIn += 1
                        s.peer = d.from
                        let step = s.host.received(d.bytes)
                        if s.host.isDown, step.downFor == nil { s.counters.dropped += 1 }
                        return (step, s.peer)
                    }
                case let .work(w):
                    (step, peer) = state.withLock { s in (s.host.perform(w), s.peer) }
                case .boot:
                    (step, peer) = state.withLock { s in (s.host.boot(), s.peer) }
                case .stop:
                    return
                }
                for note in step.notes { onNote(note) }
                if let peer {
                    for datagram in step.datagrams {
                        try? await socket.send(datagram, to: peer)
                        state.withLock { $0.counters.datagramsOut += 1 }
                    }
                }
                for work in step.work { Self.after(work.delay, scale: timeScale, sink: sink, .work(work)) }
                if let down = step.downFor {
                    state.withLock { $0.counters.resets += 1 }
                    onNote("reset: the board is back in \(down) (modelled)")
                    Self.after(down, scale: timeScale, sink: sink, .boot)
                }
            }
        }
    }

    private static func after(_ delay: Duration, scale: Double, sink: AsyncStream<Input>.Continuation, _ input: Input) {
        let real = delay * scale
        guard real > .zero else {
            sink.yield(input)
            return
        }
        Task {
            try? await ContinuousClock().sleep(for: real)
            sink.yield(input)
        }
    }

    /// The board as it stands now (flash, slots, mode).
    public var board: SimulatedBoard { state.withLock { $0.host.board } }

    /// True while the board resets.
    public var isResetting: Bool { state.withLock { $0.host.isDown } }

    public var counters: Counters { state.withLock { $0.counters } }

    /// Stops serving and closes the socket. Returns the board as it stands; a reset still in
    /// progress is completed first (the swap is not lost).
    public func stop() async -> SimulatedBoard {
        inputs.yield(.stop)
        await loop.value
        await socket.close()
        forwarder.cancel()
        return state.withLock { s in
            if s.host.isDown { _ = s.host.boot() }
            return s.host.board
        }
    }
}
