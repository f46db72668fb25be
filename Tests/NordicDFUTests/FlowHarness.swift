import NordicDFUFrames
import Transport
@testable import NordicDFU
import PartialFlashingFrames

/// Feeds events to a flow by hand and keeps what it asked for.
struct Harness<M: FlowMachine> {
    var flow: M
    var now: Duration = .zero
    private(set) var all: [FlowAction] = []

    init(_ flow: M) { self.flow = flow }

    @discardableResult
    mutating func feed(_ event: FlowEvent) -> [FlowAction] {
        now += .milliseconds(10)
        let actions = flow.handle(event, now: now)
        all += actions
        return actions
    }

    /// The bytes of the writes among `actions` to `characteristic`.
    static func writes(_ actions: [FlowAction], to characteristic: GATTCharacteristic) -> [[UInt8]] {
        actions.compactMap { if case let .write(c, b, _) = $0, c == characteristic { return b } else { return nil } }
    }

    var error: NordicDFUError? {
        guard case let .failure(e)? = flow.outcome else { return nil }
        return e as? NordicDFUError
    }
}

enum Boards {
    static let secureApp = ConnectionInfo(
        services: [PartialFlashingGATT.service, NordicGATT.secureService], mtu: 23,
        name: "BBC micro:bit")
    static let secureBootloader = ConnectionInfo(services: [NordicGATT.secureService], mtu: 247, name: "DfuTarg")
    static let legacyApp = ConnectionInfo(
        services: [PartialFlashingGATT.service, NordicGATT.dfuControlService],
        mtu: 23, name: "BBC micro:bit")
    static let legacyBootloader = ConnectionInfo(services: [NordicGATT.legacyService], mtu: 23, name: "DfuTarg")

    static func application(_ count: Int, family: ChipFamilyName = .nrf52) -> DFUApplication {
        DFUApplication(
            family: family == .nrf52 ? .nrf52833 : .nrf51, start: family == .nrf52 ? 0x1C000 : 0x18000,
            bytes: (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 5) })
    }

    enum ChipFamilyName { case nrf52, nrf51 }
}
