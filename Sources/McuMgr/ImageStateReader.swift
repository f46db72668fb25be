import Diagnostics
import SMP
import Transport

/// Reads a board's MCUboot slots over SMP, as any McuMgr client would: one image state
/// read request, answered by the list of slots. Used by `bitflash info`.
public struct ImageStateReader: FlowMachine {
    public typealias Output = [ImageSlotState]
    public typealias Report = McuMgrReport

    /// What went wrong, and what to do.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case noSMPService
        case noAnswer
        case refused(String)
        case malformed(String)
        case linkLost

        public var description: String {
            switch self {
            case .noSMPService: return "the board offers no McuMgr (SMP) service: it has no MCUboot bootloader"
            case .noAnswer: return "the board did not answer the image state read: try again closer to the board"
            case let .refused(why): return "the board refused the image state read (\(why))"
            case let .malformed(why): return "the board's image state answer is malformed: \(why)"
            case .linkLost: return "the link dropped during the image state read: try again"
            }
        }
    }

    public private(set) var outcome: Result<[ImageSlotState], any Error>?
    private var reassembler = SMPReassembler()
    private let timer = TimerID("image-state")
    private let traceBytes: Int

    /// - Parameter traceBytes: how many bytes of each frame a trace line shows in hex (0: none).
    public init(traceBytes: Int = 0) { self.traceBytes = traceBytes }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard outcome == nil else { return [] }
        switch event {
        case let .start(info):
            guard info.services.contains(SMPGATT.service) else { return fail(.noSMPService) }
            let frame = SMPFrame(request: ImageStateReadRequest(), sequence: 0)
            guard let bytes = try? frame.encoded(), bytes.count <= info.mtu - 3 else {
                return fail(.malformed("the request does not fit one write"))
            }
            return [.subscribe(SMPGATT.characteristic)] + trace(sent: true, bytes)
                + [.write(SMPGATT.characteristic, bytes, .command), .startTimer(timer, .seconds(5))]
        case let .notification(c, bytes):
            guard c == SMPGATT.characteristic else { return [] }
            reassembler.append(bytes)
            do {
                guard let frame = try reassembler.next() else { return [] }
                let raw = (try? frame.encoded()) ?? bytes
                if let error = try frame.errorResponse() { return trace(sent: false, raw) + fail(.refused("\(error)")) }
                let state = try frame.response(as: ImageStateResponse.self)
                outcome = .success(state.images.sorted { ($0.image ?? 0, $0.slot) < ($1.image ?? 0, $1.slot) })
                return trace(sent: false, raw) + [.cancelTimer(timer), .finish]
            } catch {
                return fail(.malformed("\(error)"))
            }
        case let .timerFired(id):
            return id == timer ? fail(.noAnswer) : []
        case .disconnected:
            return fail(.linkLost)
        case .connected, .connectFailed, .writeFailed:
            return []
        }
    }

    private func trace(sent: Bool, _ bytes: [UInt8]) -> [FlowAction] {
        guard traceBytes > 0 else { return [] }
        return [Self.report(.stateReadFrame(sent: sent, bytes: bytes, shownBytes: traceBytes))]
    }

    private mutating func fail(_ failure: Failure) -> [FlowAction] {
        outcome = .failure(failure)
        return [.cancelTimer(timer), .finish]
    }
}

extension ImageStateReader.Failure: DomainError {
    public var failureKind: FailureKind { .flashFailed }
}
