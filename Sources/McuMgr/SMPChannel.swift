import Diagnostics
import SMP
import Transport

/// The SMP characteristic as the upgrade sees it: numbers requests, turns
/// frames into writes and notifications back into frames, and keeps the
/// write statistics. Pure: it returns actions and never performs them.
struct SMPChannel: Sendable {
    /// Negotiated ATT MTU; one write carries `mtu − 3` bytes.
    var mtu: Int
    /// The largest frame the device accepts (its `buf_size` with reassembly, else MTU − 3).
    var frameLimit: Int
    /// True when frames may span several writes (the device reassembles).
    var reassembly: Bool
    var version: SMPVersion
    var traceBytes: Int
    private var nextSequence: UInt8 = 0
    private var reassembler = SMPReassembler(maximumPayloadLength: Int(UInt16.max))

    private(set) var writes = 0
    private(set) var largestWrite = 0
    private(set) var largestFrame = 0

    init(mtu: Int, version: SMPVersion, traceBytes: Int) {
        self.mtu = mtu
        self.frameLimit = mtu - 3
        self.reassembly = false
        self.version = version
        self.traceBytes = traceBytes
    }

    /// A cap on the payload of one write below `mtu − 3`, after long writes went unanswered.
    var writeLimit: Int?

    /// Payload bytes of one write.
    var writeSize: Int { max(1, min(mtu - 3, writeLimit ?? Int.max)) }

    /// A new connection: a new MTU, and nothing half-received.
    mutating func reconnected(mtu: Int) {
        self.mtu = mtu
        if !reassembly { frameLimit = writeSize }
        reassembler.reset()
    }

    /// Halves the payload of one write (not below 20 bytes, what the smallest MTU carries).
    /// Returns false when it cannot shrink further.
    mutating func shrinkWrites() -> Bool {
        guard writeSize > 20 else { return false }
        writeLimit = max(20, writeSize / 2)
        if !reassembly { frameLimit = min(frameLimit, writeSize) }
        return true
    }

    /// Encodes `request` with the next sequence number. Returns that number and the
    /// writes (one per `mtu − 3` bytes; a write never holds parts of two frames).
    mutating func send<R: SMPRequest>(_ request: R) throws(McuMgrError) -> (sequence: UInt8, actions: [FlowAction]) {
        let sequence = nextSequence
        nextSequence &+= 1
        let frame = SMPFrame(request: request, version: version, sequence: sequence)
        let bytes: [UInt8]
        do {
            bytes = try frame.encoded()
        } catch {
            throw .malformedResponse(command: R.name, error)
        }
        guard bytes.count <= frameLimit, reassembly || bytes.count <= writeSize else {
            throw .frameTooLarge(command: R.name, size: bytes.count, limit: reassembly ? frameLimit : writeSize)
        }
        var actions: [FlowAction] = []
        if traceBytes > 0 {
            actions.append(
                McuMgrUpgrade.report(.frame(sent: true, header: frame.header, bytes: bytes, shownBytes: traceBytes)))
        }
        // A frame over several writes: the first write is the longest, the others one byte
        // shorter. Zephyr's reassembly refuses a write longer than the bytes its partial frame
        // still misses, and drops that partial frame (docs/protocols/mcumgr-smp.md §2.3). So when one write of
        // a frame is lost on the way, the first write of the next frame cannot complete the
        // broken frame with its own bytes (which the device would take as image data): it is
        // refused, and the broken frame goes with it.
        var start = 0
        while start < bytes.count {
            let size = start == 0 || writeSize <= 20 ? writeSize : writeSize - 1
            let end = min(bytes.count, start + size)
            actions.append(.write(SMPGATT.characteristic, Array(bytes[start..<end]), .command))
            writes += 1
            largestWrite = max(largestWrite, end - start)
            start = end
        }
        largestFrame = max(largestFrame, bytes.count)
        return (sequence, actions)
    }

    /// Feeds one notification; returns the frames it completed and any decoding failure.
    mutating func receive(_ bytes: [UInt8]) -> (frames: [SMPFrame], failure: SMPError?, traces: [FlowAction]) {
        reassembler.append(bytes)
        var frames: [SMPFrame] = []
        var traces: [FlowAction] = []
        while true {
            do {
                guard let frame = try reassembler.next() else { return (frames, nil, traces) }
                frames.append(frame)
                if traceBytes > 0 {
                    let raw = (try? frame.encoded()) ?? []
                    traces.append(
                        McuMgrUpgrade.report(
                            .frame(sent: false, header: frame.header, bytes: raw, shownBytes: traceBytes)))
                }
            } catch {
                return (frames, error, traces)
            }
        }
    }
}
