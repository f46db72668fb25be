import LinkModel
import NordicDFU
import NordicDFUFrames

/// Estimates a full update through a stock board's Nordic bootloader, stepped on the link
/// model as `NordicDFUFlow` runs it (docs/protocols/nordic-dfu.md §2.5, §3.5).
///
/// Time is counted in connection events: a write handed to the link leaves in the next event,
/// the board's answer in the event after the one that carried the request, and the client's
/// next write in the event after that. An event carries at most `packetsPerEvent` packets and
/// no more than fit in the interval. Waits of the client (the post-Create wait, the reconnect
/// delay) end in the first event after them.
///
/// - Secure DFU (micro:bit V2, Calliope mini 3): the buttonless entry (the board resets 20 ms
///   after its answer), the reconnect delay and a new connection to "DfuTarg"; Select, Create,
///   PRN 0, the init packet with its checksum, Execute, PRN and Select of the data (7 round
///   trips); per data object a Create, the wait after it (the page erase runs meanwhile), its
///   packets in batches of the receipt interval with a receipt round trip after each, the
///   checksum and Execute; after the last Execute the bootloader writes its settings and their
///   backup (two page erases, two writes), resets as soon as they are written, and reboots.
/// - Legacy DFU (micro:bit V1, Calliope mini 1/2): `01` to the DFU control characteristic (the
///   board resets at once), the reconnect delay and a new connection; Start with the sizes,
///   answered after the erase of every page of the application; the init packet; the firmware
///   in 20-byte packets, a receipt every `legacyPacketReceipts`; Validate; Activate (the board
///   resets 100 ms later); then the reconnect delay and a connection to the new application.
///
/// The simulated bootloaders write each packet as it arrives (the flash queue), so word
/// writes add no time; page erases do (the legacy Start, and a Secure object whose erase
/// outlasts the post-Create wait).
public struct NordicDFUEstimator: PathEstimator {
    public var path: EstimatedPath { .nordicDFU }
    /// Bytes of the application binary the bootloader receives (`DFUApplication.bytes`).
    public var applicationBytes: Int
    /// The protocol the board's bootloader speaks.
    public var dfuProtocol: NordicDFUProtocol
    /// The flow's receipts and waits.
    public var options: NordicDFUOptions
    /// The Secure DFU bootloader's largest data object (what Select data answers).
    public var objectSize: Int
    /// From the legacy bootloader's Activate to its reset (the Secure DFU bootloader's reset
    /// follows its settings write instead, from the board's timing).
    public var bootloaderResetDelay: Duration
    /// From the buttonless answer to the reset into the bootloader (Secure DFU).
    public var buttonlessResetDelay: Duration
    /// Whether the session reads the restarted board back over partial flashing (a file with a
    /// MakeCode program): after Secure DFU on a new connection, after legacy DFU on the
    /// connection the flow ends on; STATUS and REGION_INFO 1 and 2.
    public var readsBack = false

    /// The Secure DFU bootloader of micro:bit V2 and Calliope mini 3 takes objects of 4 KiB.
    public static let secureObjectSize = 4096

    public init(
        applicationBytes: Int, protocol dfuProtocol: NordicDFUProtocol, options: NordicDFUOptions = NordicDFUOptions(),
        objectSize: Int = NordicDFUEstimator.secureObjectSize, bootloaderResetDelay: Duration = .milliseconds(100),
        buttonlessResetDelay: Duration = .milliseconds(20)
    ) {
        self.applicationBytes = max(applicationBytes, 0)
        self.dfuProtocol = dfuProtocol
        self.options = options
        self.objectSize = max(objectSize, 4)
        self.bootloaderResetDelay = bootloaderResetDelay
        self.buttonlessResetDelay = buttonlessResetDelay
    }

    /// The bootloader connection's ATT MTU and LL data length: the Secure bootloader offers
    /// 247 and 251, the legacy one 23 and 27; a named profile's own limits apply too (the
    /// application's MTU measured on this connection says nothing of the bootloader's).
    func bootloaderLink(_ link: LinkEstimate) -> (mtu: Int, dataLength: Int) {
        let p = link.profile
        let (mtu, dl) = dfuProtocol == .secure ? (247, 251) : (23, 27)
        return (link.source == .profile ? min(p.attMTU, mtu) : mtu, max(min(p.dataLength, dl), 27))
    }

    public func estimate(_ context: EstimateContext) -> PathEstimate {
        let steps = dfuProtocol == .secure ? secureSteps(context) : legacySteps(context)
        let (mtu, _) = bootloaderLink(context.link)
        var assumptions: [String] = []
        if dfuProtocol == .secure, context.link.source != .profile {
            assumptions.append("the bootloader's MTU \(mtu) (the adapter is assumed to allow it)")
        }
        var counts = [
            "bytes": applicationBytes, "pages": context.board.pages(applicationBytes), "packets": steps.packets
        ]
        if dfuProtocol == .secure { counts["objects"] = (applicationBytes + objectSize - 1) / objectSize }
        var parts = [context.beforeDecision] + steps.parts
        if readsBack {
            let profile = context.link.profile
            // STATUS and REGION_INFO 2 one event apart (`ReadBackReader`): 2 CI.
            let roundTrips = Duration.microseconds(2 * profile.connectionIntervalMicroseconds)
            parts.append(
                .init(
                    name: Self.readBackPart,
                    duration: dfuProtocol == .secure ? profile.connectionSetup + roundTrips : roundTrips))
        }
        return PathEstimate(path: .nordicDFU, parts: parts, counts: counts, assumptions: assumptions)
    }
}

/// The link-model stepping shared by both protocols: time in µs on one connection's event grid.
struct DFULinkClock {
    let ci: Int64
    let perEvent: Int
    let dataLength: Int
    /// The event in which the client last received something (writes handed now leave in the next).
    var event: Int64 = 0

    init(profile: LinkProfile, dataLength: Int) {
        ci = max(profile.connectionIntervalMicroseconds, 1)
        perEvent = max(profile.packetsPerEvent, 1)
        self.dataLength = dataLength
    }

    /// Link-layer payload sizes of the writes of `values` bytes each.
    func packets(_ values: [Int]) -> [Int] {
        values.flatMap { AirTime.fragments(bytes: AirTime.writePDU(value: $0), dataLength: dataLength) }
    }

    /// Events needed to send `packets` from the central: at most `perEvent` exchanges per event,
    /// no more than fit before the next event (the first always goes).
    func events(for packets: [Int]) -> Int64 {
        let limit = max(ci - AirTime.interFrameSpace, AirTime.exchange(central: 0, peripheral: 0))
        var events: Int64 = 0
        var i = 0
        while i < packets.count {
            events += 1
            var cursor: Int64 = 0
            var n = 0
            while i < packets.count, n < perEvent {
                let exchange = AirTime.exchange(central: packets[i], peripheral: 0)
                if n > 0 && cursor + exchange > limit { break }
                cursor += exchange
                n += 1
                i += 1
            }
        }
        return events
    }

    /// The writes of `values` bytes leave from the next event on; the board's answer to the last
    /// comes in the event after. Returns the event that carried the last write.
    @discardableResult
    mutating func exchange(_ values: [Int]) -> Int64 {
        let last = event + max(events(for: packets(values)), 1) * ci
        event = last + ci
        return last
    }

    /// The board's answer waits for the first event at or after `time` (µs) if that is later
    /// than the event it would take.
    mutating func answer(notBefore time: Int64) {
        event = max(event, (time + ci - 1) / ci * ci)
    }

    /// The first event after a wait of `wait` from `from` (µs after the event `from`'s start).
    func firstEvent(after from: Int64, wait: Duration) -> Int64 {
        from + (wait.wholeMicroseconds / ci + 1) * ci
    }
}
