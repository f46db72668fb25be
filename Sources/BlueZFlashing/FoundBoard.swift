import BlueZTransport
import Transport

/// A board seen in a scan, as `bitflash scan` lists it: what its advertisement and BlueZ tell.
public struct FoundBoard: Sendable, Equatable, Codable {
    /// What the advertisement tells of the board's mode: `application`, `pairing`,
    /// `bootloader` (DfuTarg) or `unknown` (`BoardSighting.recognize` has the rules).
    public typealias Mode = AdvertisedMode
    /// The family the advertisement tells: `micro:bit`, `Calliope mini`, a McuMgr board, a Nordic bootloader, or `other`.
    public typealias Family = AdvertisedBoard

    /// The advertised name (`BBC micro:bit [zotig]`, `DfuTarg`), when one was seen.
    public var name: String?
    /// The Bluetooth address, `AA:BB:CC:DD:EE:FF`: what to pass to `BlueZFlasher.flash`.
    public var address: String
    /// The signal strength of its last advertisement; nil for a board seen only as connected.
    public var rssi: Int?
    public var mode: Mode
    /// BlueZ holds a bond with it.
    public var bonded: Bool
    public var family: Family

    public init(name: String?, address: String, rssi: Int?, mode: Mode, bonded: Bool, family: Family) {
        self.name = name
        self.address = address
        self.rssi = rssi
        self.mode = mode
        self.bonded = bonded
        self.family = family
    }

    /// The board as a scan saw it.
    public init(_ sighting: BoardSighting) {
        self.init(
            name: sighting.name, address: sighting.address, rssi: sighting.rssi, mode: sighting.mode,
            bonded: sighting.bonded, family: sighting.board)
    }
}

/// When a scan may end before its time is up.
public enum ScanUntil: Sendable, Equatable {
    /// Scan for the whole time.
    case timeout
    /// Until this many boards have been seen.
    case boards(Int)
    /// Until the board named by an address, a name, its friendly name or part of it has been seen.
    case board(String)

    var goal: ScanGoal {
        switch self {
        case .timeout: return .fullTime
        case .boards(let n): return .boards(n)
        case .board(let query): return .board(DeviceQuery(query))
        }
    }
}

extension BlueZFlasher {
    /// The boards that advertise within `duration` (default: the settings' scan timeout),
    /// strongest first: every micro:bit and Calliope mini by its name, in application mode,
    /// pairing mode and its bootloader (`DfuTarg`), and boards advertising the McuMgr service.
    /// With `everything`, every Bluetooth LE device seen. A board BlueZ only remembers is not
    /// listed until it advertises.
    ///
    /// The scan sets no service filter: CODAL and DAL boards advertise their name only.
    /// It ends as soon as `until` is met; call `missing(_:in:)` to learn whether it was.
    /// - Throws: `BlueZError` when Bluetooth is not available.
    public func scan(for duration: Duration? = nil, everything: Bool = false, until: ScanUntil = .timeout) async throws
        -> [FoundBoard]
    {
        let time = duration ?? settings.scanTimeout
        // A scan asks only bluetoothd: a bus or a bluetoothd that does not answer ends it within
        // its own time (at least a second, for a bluetoothd busy with other clients).
        let bus = try await BlueZBus.open(bus: settings.bus, serviceTimeout: BlueZBus.serviceTimeout(within: time))
        defer { bus.close() }
        return try await BlueZScanner(bus: bus, adapter: settings.adapter)
            .boards(timeout: time, all: everything, until: until.goal)
            .map(FoundBoard.init)
    }

    /// What `until` asked for and `found` lacks, in words; nil when it was met.
    public static func missing(_ until: ScanUntil, in found: [FoundBoard]) -> String? {
        switch until {
        case .timeout:
            return nil
        case .board(let text):
            let query = DeviceQuery(text)
            return found.contains { query.rank(name: $0.name, address: $0.address) != nil }
                ? nil : "\(text) was not seen"
        case .boards(let n):
            let boards = found.count { $0.family != .other }
            return boards >= n ? nil : "\(boards) of \(n) boards seen"
        }
    }
}
