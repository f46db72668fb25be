/// How a board advertises, and the part of connecting to it that a controller does for one
/// board at a time.
///
/// Linux creates one LE connection at a time per controller: `hci_connect_le` (net/bluetooth/
/// hci_conn.c) refuses with EBUSY while another LE connection attempt is in progress, and
/// `check_pending_le_conn` (hci_event.c) leaves the address pending until its next
/// advertisement; newer kernels run the LE Create Connection in the one-at-a-time hci_sync
/// queue (`hci_le_create_conn_sync`, hci_sync.c). A class whose boards are all asked to connect
/// at once therefore gets its connections one after another, each to the pending board heard
/// first. Linux then turns the scan off and has the controller connect to that board's address,
/// which needs the board's next advertisement. One creation is taken as the wait until the
/// first board is heard (the controller scans all the time: for one board half its advertising
/// interval on average, for `k` alike `interval / (k + 1)`, `firstHeard`), one advertising
/// interval more until that board advertises again, and one connection interval until the
/// connection completes (no source says when a controller reports it: its first event is taken).
/// The rest of the connection setup (MTU exchange, service discovery, subscriptions) runs
/// alongside the other boards'. These are means over the boards' phases, not measurements; the
/// 0 to 10 ms advDelay the Core specification adds to each advertising event is left out.
public enum Advertising: String, Sendable, Equatable, Codable {
    /// Pairing mode: 200 ms (CODAL and DAL `MicroBitBLEManager.cpp` `pairingMode`).
    case pairing
    /// A program that keeps Bluetooth on: 50 ms (`MICROBIT_BLE_ADVERTISING_INTERVAL`, CODAL
    /// `inc/MicroBitConfig.h`, DAL `inc/core/MicroBitConfig.h`).
    case application
    /// A Nordic bootloader ("DfuTarg"): 25 ms (nRF5 SDK `sdk_config.h` `NRF_DFU_BLE_ADV_INTERVAL`
    /// 40 × 0.625 ms, `nrf_dfu_ble.c` `advertising_start`; the legacy bootloader's interval was
    /// not read in its source and is taken as the same).
    case bootloader

    /// The time between two advertising events.
    public var interval: Duration {
        switch self {
        case .pairing: .milliseconds(200)
        case .application: .milliseconds(50)
        case .bootloader: .milliseconds(25)
        }
    }

    /// The serial part of creating a connection to a lone board advertising so, on a link of
    /// `connectionInterval`: half the advertising interval until it is heard, one interval until
    /// its next advertisement, and one connection interval.
    public func creation(connectionInterval: Duration) -> Duration {
        interval / 2 + interval + connectionInterval
    }

    /// The expected wait for the first advertisement of boards advertising every `intervals`,
    /// each at a phase uniform over its interval: ∫ ∏ (1 − t / Iᵢ) dt from 0 to the least Iᵢ
    /// (`I / (k + 1)` for `k` boards alike; half the interval for one board).
    public static func firstHeard(among intervals: [Duration]) -> Duration {
        let all = intervals.map { Double($0.wholeMicroseconds) }.filter { $0 > 0 }
        guard let shortest = all.min() else { return .zero }
        if all.allSatisfy({ $0 == shortest }) {
            return .microseconds(Int64((shortest / Double(all.count + 1)).rounded()))
        }
        let steps = 512
        let dt = shortest / Double(steps)
        var sum = 0.0
        for s in 0..<steps {
            let t = (Double(s) + 0.5) * dt
            sum += all.reduce(1.0) { $0 * (1 - t / $1) } * dt
        }
        return .microseconds(Int64(sum.rounded()))
    }

    /// When each of `count` boards advertising so, all asked to connect at once through one
    /// controller, has its connection, from the moment they asked: the controller takes them
    /// one at a time, each when it hears the next (`firstHeard` among those still waiting),
    /// that board's next advertisement one interval later, and one connection interval after.
    public func creations(of count: Int, connectionInterval: Duration) -> [Duration] {
        var out: [Duration] = []
        var at = Duration.zero
        for waiting in stride(from: count, to: 0, by: -1) {
            at +=
                Self.firstHeard(among: Array(repeating: interval, count: waiting)) + interval + connectionInterval
            out.append(at)
        }
        return out
    }
}
