import FirmwareImage
import NordicDFU
import NordicDFUFrames
import Transport
import PartialFlashingFrames

/// What the Nordic DFU flow targets share: the images, the boards' connections, the
/// options (with bounds small enough for the fuzzer to reach) and the link bookkeeping.
public enum NordicFixture {
    /// Application sizes: several objects of every object size the boards announce, exactly
    /// one 1 KiB object, one packet, less than one packet.
    public static let sizes = [2_348, 1_024, 20, 4]

    /// An application of `count` bytes without repeated runs (xorshift), so a slice of it is
    /// found at one offset only, placed where the clients cut it for `family`.
    public static func application(count: Int, family: ChipFamily) -> (image: MemoryImage, bytes: [UInt8]) {
        var state: UInt32 = 0x9E37_79B9 ^ UInt32(count)
        let bytes = (0..<count).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state >> 11)
        }
        let start = DFUApplication.range(for: family).lowerBound
        return (MemoryImage(segments: [MemoryImage.Segment(start: start, bytes: bytes)]), bytes)
    }

    /// Options from two input bytes: packet receipts (none, every packet, a few, the
    /// default), and the attempt, timeout, link-loss and retry bounds down to their minimum.
    public static func options(_ a: UInt8, _ b: UInt8) -> NordicDFUOptions {
        var o = NordicDFUOptions()
        o.securePacketReceipts = [12, 0, 1, 3][Int(a & 3)]
        o.legacyPacketReceipts = [8, 0, 1, 5][Int(a >> 2 & 3)]
        o.objectAttempts = Int(a >> 4 & 3) + 1
        o.reconnectAttempts = Int(a >> 6) * 2 + 1
        o.timeoutLimit = Int(b & 7) * 2
        o.linkLossLimit = Int(b >> 3 & 3) * 3
        o.retryLimit = b & 0x20 == 0 ? 48 : Int(b >> 6) * 4
        return o
    }

    public static let secureApplication = ConnectionInfo(
        services: [PartialFlashingGATT.service, NordicGATT.secureService], mtu: 23, name: "BBC micro:bit")
    public static func secureBootloader(mtu: Int) -> ConnectionInfo {
        ConnectionInfo(services: [NordicGATT.secureService], mtu: mtu, name: NordicGATT.bootloaderName)
    }
    public static let legacyApplication = ConnectionInfo(
        services: [PartialFlashingGATT.service, NordicGATT.dfuControlService], mtu: 23,
        name: "BBC micro:bit")
    public static func legacyBootloader(mtu: Int) -> ConnectionInfo {
        ConnectionInfo(services: [NordicGATT.legacyService], mtu: mtu, name: NordicGATT.bootloaderName)
    }
    public static let nothing = ConnectionInfo(services: [], mtu: 23)
    public static let mtus = [23, 27, 185, 247]
}

/// The link as the harness sees it, and the bounds every Nordic flow keeps whatever the board does.
public struct NordicLinkCheck {
    public let options: NordicDFUOptions
    /// Consecutive failed connects the flow may take before it gives up.
    public let connectFailureLimit: Int
    public private(set) var linkUp = true
    public private(set) var connectedEvents = 0
    /// `connected` while the link was up (no drop before): a driver would not send it, a
    /// flow may take it as a new connection and start over without counting a retry.
    public private(set) var spuriousConnects = 0
    public private(set) var failedConnectsInARow = 0
    public private(set) var sawStaleTimer = false
    /// Firings of the running response timer: requests that went unanswered.
    public private(set) var unanswered = 0

    public init(options: NordicDFUOptions, connectFailureLimit: Int) {
        self.options = options
        self.connectFailureLimit = connectFailureLimit
    }

    /// Books `event` before the flow sees it; `stale` when it is a timer the flow no longer
    /// runs. The drivers drop those (they keep a generation per timer); a flow handed one
    /// anyway may act on a link it believes up, so the link check ends there.
    public mutating func deliver(_ event: FlowEvent, stale: Bool) {
        if stale { sawStaleTimer = true }
        switch event {
        case .connected:
            if linkUp { spuriousConnects += 1 }
            linkUp = true
            connectedEvents += 1
            failedConnectsInARow = 0
        case .disconnected: linkUp = false
        case .connectFailed: failedConnectsInARow += 1
        case let .timerFired(id) where id.name == "response" && !stale: unanswered += 1
        default: break
        }
    }

    /// Checks what the flow did with `event`: no write on a link that is down (unless a
    /// stale timer came before), no more failed connects in a row and no more unanswered
    /// requests than the options allow.
    public func check(_ actions: [FlowAction], after event: FlowEvent, finished: Bool) {
        if !linkUp, !sawStaleTimer, let write = actions.first(where: { if case .write = $0 { true } else { false } }) {
            fatalError("\(write) after the link dropped, in answer to \(event)")
        }
        require(
            finished || failedConnectsInARow < connectFailureLimit,
            "\(failedConnectsInARow) failed connects in a row, and the flow goes on (limit \(connectFailureLimit))")
        require(
            finished || unanswered <= options.timeoutLimit,
            "\(unanswered) requests timed out, and the flow goes on (limit \(options.timeoutLimit))")
    }
}
