import DBus
import Foundation
import NordicDFUFrames
import SimulatedBoard
import Transport

/// One board as the fake BlueZ service sees it: BlueZ's view of the device (exported,
/// connected, paired) and the board itself behind its real-time host.
struct FakeDevice: Sendable {
    let spec: FakeBoard
    let path: String
    var host: GATTBoardHost
    /// The `Device1` object is in the tree (discovered, or known from a bond).
    var exported = false
    var connected = false
    var connecting = false
    var pairing = false
    var pairingCancelled = false
    var resolved = false
    var paired = false
    var bonded = false
    var trusted = false
    var blocked = false
    var alias: String?
    /// BlueZ keeps a bond the board no longer has.
    var staleBond: Bool
    /// The board holds a bond with this computer (its whitelist is not empty). It outlives
    /// `RemoveDevice`, which only makes BlueZ forget.
    var boardBonded: Bool
    var connectFailures: [FakeBoardBehaviour.ConnectFailure]
    var writesUntilDisconnect: Int?
    /// Counts links, so that delayed link events of an old link are ignored.
    var linkEpoch = 0
    /// The GATT objects exported while services are resolved.
    var gatt: FakeGATTTable?
    var mtu: UInt16 = 23
    /// Characteristic path → the D-Bus clients that called `StartNotify` on it.
    var notifySessions: [String: Set<String>] = [:]
    /// The name of the last advertisement BlueZ passed on (or of the bond it holds).
    var knownName: String?
    /// The service UUIDs of the last advertisement BlueZ passed on.
    var knownUUIDs: [String] = []
    /// An advertisement was passed on since discovery last stopped (BlueZ then shows an RSSI).
    var rssiValid = false
    /// The primary services BlueZ resolved on a connection (then `UUIDs` lists them).
    var resolvedUUIDs: [String]?
    /// Characteristic path → its last value (read or notified).
    var values: [String: [UInt8]] = [:]
    var writesDelivered = 0
    /// The sockets handed out by `AcquireWrite`/`AcquireNotify`, by characteristic path.
    var writeSockets: [String: FakeBlueZ.AcquiredSocket] = [:]
    var notifySockets: [String: FakeBlueZ.AcquiredSocket] = [:]
    /// How often each method handed out a socket, and the writes that came through sockets.
    var acquiredWrites = 0
    var acquiredNotifies = 0
    var socketWrites = 0
    var socketNotifications = 0
    var signalNotifications = 0
    var socketsClosedByScenario = false
    /// Notifications on their way to the client, oldest first, and a reset that waits for them.
    var outbox: [OutboxItem] = []
    var notificationsSent = 0
    /// Set on every device but a board's own under the first adapter (its bootloader at the next
    /// address, its devices under the other adapters): the index of the board's own device,
    /// whose board this device plays.
    var owner: Int?
    /// Set on a board's device object under another adapter (`owner` is the board's own device).
    var mirror = false
    /// Set on the device of a board's bootloader at the next address (under any adapter).
    var atNextAddress = false
    /// The bonded buttonless entry handed this link's bond to the bootloader (V2 bootloader
    /// "peer data"), so the bootloader encrypts with BlueZ's key.
    var handedOverBond = false
    /// Counts the security events of a new pairing in pairing mode (0: none); only the latest
    /// one's timers act, and only during the boot they were counted in (`FakeBlueZ+Pairing.swift`).
    var pairingStamp = 0
    var pairingComplete = false
    var pairingBoot = -1

    init(spec: FakeBoard, adapterPath: String, owner: Int? = nil) {
        self.spec = spec
        self.owner = owner
        path = BlueZ.devicePath(adapter: adapterPath, address: spec.address)
        host = GATTBoardHost(board: spec.board, timing: spec.timing)
        if spec.behaviour.pairingModeOnly || spec.behaviour.startsInPairingMode, host.board.mode != .pairing {
            host.resetByUser(holdingButtons: true)
        }
        staleBond = spec.behaviour.staleBond
        boardBonded = spec.behaviour.bonded && !spec.behaviour.staleBond
        connectFailures = spec.behaviour.connectFailures
        writesUntilDisconnect = spec.behaviour.disconnectAfterWrites
        if staleBond || spec.behaviour.bonded {
            paired = true
            bonded = true
            trusted = true
            // The bond was made in pairing mode: BlueZ knows the name advertised then.
            knownName = name
        }
    }

    /// The name in this device's trace lines.
    var name: String { spec.name ?? spec.board.profile.name }
    var behaviour: FakeBoardBehaviour { spec.behaviour }
    /// The hostility of the object at `path` (the seed picks per object and property).
    func hostile(at path: String) -> HostileDBus {
        HostileDBus(modes: spec.behaviour.hostile, seed: spec.behaviour.hostileSeed, salt: path)
    }
    /// `Device1.UUIDs`: the advertised service UUIDs until BlueZ has resolved the services,
    /// then the primary services of the GATT table (B566 `device.c` `dev_property_get_uuids()`).
    var uuidsProperty: [String] { resolvedUUIDs ?? knownUUIDs }

    /// The device of `board`'s bootloader at the next address, playing the board of device `owner`.
    /// That bootloader is built without bonds: open, no pairing (nRF5 SDK `nrf_dfu_ble.c`, the
    /// `NRF_DFU_BLE_REQUIRES_BONDS 0` paths).
    static func bootloader(of board: FakeBoard, owner: Int, adapterPath: String) -> FakeDevice {
        var behaviour = FakeBoardBehaviour()
        behaviour.rssi = board.behaviour.rssi
        behaviour.gattCache = board.behaviour.gattCache
        let spec = FakeBoard(
            board: board.board, name: NordicGATT.bootloaderName,
            address: FakeBlueZ.nextAddress(after: board.address), behaviour: behaviour)
        var device = FakeDevice(spec: spec, adapterPath: adapterPath, owner: owner)
        device.atNextAddress = true
        return device
    }
}

/// A discovery filter set with `Adapter1.SetDiscoveryFilter`.
struct DiscoveryFilter: Sendable, Equatable {
    var uuids: Set<String> = []
    var rssi: Int16?
    var transport = "auto"
    var pattern: String?

    /// BlueZ's per-client match of a report (B566 `adapter.c` `is_filter_match()`): no UUIDs
    /// or one of them advertised, then the RSSI threshold.
    func matches(_ ad: FakeAdvertisement, rssi reported: Int16) -> Bool {
        if !uuids.isEmpty, uuids.isDisjoint(with: ad.uuids) { return false }
        if let rssi, reported < rssi { return false }
        return true
    }
}

/// What BlueZ does with one advertising report of a device.
enum ReportOutcome: Equatable {
    /// Dropped (by the kernel's filter, or a new device that is not discoverable).
    case dropped
    /// A new device object (InterfacesAdded), with the report's name and RSSI.
    case created
    /// A known device gets the report's name and RSSI (PropertiesChanged).
    case updated
    /// A known device whose report is not passed on: only BlueZ's "last seen" moves.
    case unchanged
}

/// Everything the fake holds, behind one lock.
struct FakeState: Sendable {
    var devices: [FakeDevice]
    /// The most devices each adapter (by path) had connected at once.
    var peakConnections: [String: Int] = [:]
    var powered = true
    /// Filters by D-Bus client (kept until the client leaves or clears it).
    var filters: [String: DiscoveryFilter] = [:]
    /// The D-Bus clients that have a discovery session.
    var sessions: Set<String> = []
    var stopped = false
    /// Events due now, handled before the lock is released.
    var due: [FakeEvent] = []

    var discovering: Bool { !sessions.isEmpty }

    /// The filters of the clients discovering now (nil: a client without a filter).
    var activeFilters: [DiscoveryFilter?] { sessions.sorted().map { filters[$0] } }

    /// What BlueZ 5.66 does with a report of `ad` from `device`, as `btd_adapter_update_found_device()`
    /// decides it after the kernel's filter:
    /// 1. The kernel drops LE reports when every client scans BR/EDR only, and, when every
    ///    client has a filter with UUIDs, reports that carry none of them (`merge_discovery_filters()`,
    ///    Linux `mgmt.c` `is_filter_match()`).
    /// 2. Discoverable: any filter at all (`filtered_discovery`), else the LE Limited/General
    ///    Discoverable flag; a client's `Pattern` then decides alone (prefix of the address or
    ///    of the name in the report, `device_is_discoverable()`).
    /// 3. A new device needs to be discoverable; a known one is updated only when discoverable
    ///    and, with filters, matched by some client (`is_filter_match()`).
    func outcome(of device: FakeDevice, _ ad: FakeAdvertisement) -> ReportOutcome {
        let filters = activeFilters
        guard !filters.isEmpty else { return .dropped }
        if filters.allSatisfy({ $0?.transport == "bredr" }) { return .dropped }
        let everyFilterHasUUIDs = filters.allSatisfy { !($0?.uuids.isEmpty ?? true) }
        if everyFilterHasUUIDs {
            let union = filters.reduce(into: Set<String>()) { $0.formUnion($1?.uuids ?? []) }
            if union.isDisjoint(with: ad.uuids) { return .dropped }
        }
        let filtered = filters.contains { $0 != nil }
        var discoverable = filtered || ad.discoverable
        let patterns = filters.compactMap { $0?.pattern }
        if !patterns.isEmpty {
            discoverable = patterns.contains { p in
                p.isEmpty || device.spec.address.uppercased().hasPrefix(p) || ad.name.hasPrefix(p)
            }
        }
        if !device.exported { return discoverable ? .created : .dropped }
        guard discoverable else { return .unchanged }
        if filtered, !filters.contains(where: { $0.map { $0.matches(ad, rssi: device.behaviour.rssi) } ?? true }) {
            return .unchanged
        }
        return .updated
    }

    func index(ofDevice path: String) -> Int? { devices.firstIndex { $0.path == path } }

    /// Moves every board's modelled time on to `now` (never back).
    mutating func setTime(_ now: Duration) {
        for i in devices.indices where devices[i].owner == nil { devices[i].host.now = max(devices[i].host.now, now) }
    }

    /// The index of the device whose board device `i` plays: itself, or the board's own device
    /// for a bootloader at the next address.
    func boardIndex(_ i: Int) -> Int { devices[i].owner ?? i }

    /// The board behind device `i`, as it stands.
    func board(of i: Int) -> SimulatedBoard { devices[boardIndex(i)].host.board }

    /// The devices that play the board of device `i`: its own and its bootloader's at the next
    /// address, under every adapter.
    func identities(of i: Int) -> [Int] {
        let b = boardIndex(i)
        return devices.indices.filter { boardIndex($0) == b }
    }

    /// Whether device `i` advertises now.
    func isAdvertising(_ i: Int) -> Bool { advertisement(of: i) != nil }

    /// The name a connected board's GAP Device Name gives BlueZ (BlueZ `profiles/gap/gas.c`):
    /// the name it advertises in its current mode ("DfuTarg" while the bootloader runs; CODAL
    /// and DAL set the GAP name to the advertised one), else the one BlueZ knows.
    func gapName(_ i: Int) -> String? {
        advertisement(of: i)?.name ?? devices[i].knownName
    }

    /// Whether acknowledged operations on device `i` need a bond now: in the application and
    /// pairing mode as the scenario says (a Just Works build); in the bootloader only while the
    /// bond handed over by the bonded buttonless entry is valid, which needs a valid application
    /// (V2 bootloader `nrf_dfu_ble.c` L1187-1200); never at the next address (built without bonds).
    func needsBond(_ i: Int) -> Bool {
        let d = devices[i]
        guard d.behaviour.requiresPairing else { return false }
        let board = board(of: i)
        guard board.inNordicBootloader else { return true }
        return d.handedOverBond && board.nordicSettings.applicationValid
    }
}

/// Something that happens later on the fake's clock.
/// What leaves a board at its next connection event.
enum OutboxItem: Sendable {
    /// A notification sent on link `epoch`.
    case notification(epoch: Int, GATTCharacteristic, [UInt8])
    /// The board resets (after answering): the link drops, the board is down this long.
    case reset(down: Duration)
}

enum FakeEvent: Sendable {
    /// The board's scheduled work is done.
    case work(device: Int, GATTBoardHost.Work, due: Duration)
    /// The board's reset time is over.
    case boot(device: Int)
    /// GATT discovery of link `epoch` is over.
    case resolve(device: Int, epoch: Int)
    /// Advertisements reach the adapter.
    case advertise(devices: [Int])
    /// A connection event: the oldest notification in the device's outbox goes on air.
    case deliver(device: Int)
    /// The quiet time after the last security event of a new pairing is over.
    case pairingSettled(device: Int, stamp: Int)
    /// The board drops the pairing host's link.
    case pairingDisconnect(device: Int, stamp: Int)
    /// The tick after a new pairing is over: the board resets.
    case pairingReset(device: Int, stamp: Int)
}
