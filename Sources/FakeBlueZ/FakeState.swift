import DBus
import Foundation
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
    var connectFailures: [FakeBoardBehaviour.ConnectFailure]
    var writesUntilDisconnect: Int?
    /// Counts links, so that delayed link events of an old link are ignored.
    var linkEpoch = 0
    /// The GATT objects exported while services are resolved.
    var gatt: FakeGATTTable?
    var mtu: UInt16 = 23
    /// Characteristic path → the D-Bus clients that called `StartNotify` on it.
    var notifySessions: [String: Set<String>] = [:]
    /// Characteristic path → its last value (read or notified).
    var values: [String: [UInt8]] = [:]
    var writesDelivered = 0
    /// Notifications on their way to the client, oldest first, and a reset that waits for them.
    var outbox: [OutboxItem] = []
    var notificationsSent = 0

    init(spec: FakeBoard, adapterPath: String) {
        self.spec = spec
        path = BlueZ.devicePath(adapter: adapterPath, address: spec.address)
        host = GATTBoardHost(board: spec.board, timing: spec.timing)
        if spec.behaviour.pairingModeOnly, host.board.mode != .pairing { host.resetByUser(holdingButtons: true) }
        staleBond = spec.behaviour.staleBond
        connectFailures = spec.behaviour.connectFailures
        writesUntilDisconnect = spec.behaviour.disconnectAfterWrites
        if staleBond {
            paired = true
            bonded = true
            trusted = true
        }
    }

    var name: String { spec.name ?? spec.board.profile.name }
    var behaviour: FakeBoardBehaviour { spec.behaviour }
    /// The hostility of the object at `path` (the seed picks per object and property).
    func hostile(at path: String) -> HostileDBus {
        HostileDBus(modes: spec.behaviour.hostile, seed: spec.behaviour.hostileSeed, salt: path)
    }
    var advertisedUUIDs: [String] {
        spec.behaviour.advertisedUUIDs ?? spec.board.offeredServices.sorted().map(\.uuidString)
    }
    /// Whether the board advertises now.
    var isAdvertising: Bool {
        !behaviour.absent && !host.isDown && host.board.isConnectable
            && !(behaviour.pairingModeOnly && host.board.mode != .pairing)
    }
}

/// A discovery filter set with `Adapter1.SetDiscoveryFilter`.
struct DiscoveryFilter: Sendable, Equatable {
    var uuids: Set<String> = []
    var rssi: Int16?
    var transport = "auto"
    var pattern: String?

    func matches(_ device: FakeDevice) -> Bool {
        if transport == "bredr" { return false }
        if !uuids.isEmpty, uuids.isDisjoint(with: device.advertisedUUIDs.map { $0.lowercased() }) { return false }
        if let rssi, device.behaviour.rssi < rssi { return false }
        if let pattern, !pattern.isEmpty,
           !(device.spec.address.uppercased().hasPrefix(pattern.uppercased()) || device.name.hasPrefix(pattern)) {
            return false
        }
        return true
    }
}

/// Everything the fake holds, behind one lock.
struct FakeState: Sendable {
    var devices: [FakeDevice]
    var powered = true
    /// Filters by D-Bus client (kept until the client leaves or clears it).
    var filters: [String: DiscoveryFilter] = [:]
    /// The D-Bus clients that have a discovery session.
    var sessions: Set<String> = []
    var stopped = false
    /// Events due now, handled before the lock is released.
    var due: [FakeEvent] = []

    var discovering: Bool { !sessions.isEmpty }

    /// Whether any discovering client's filter lets `device` through.
    func discovers(_ device: FakeDevice) -> Bool {
        sessions.contains { (filters[$0] ?? DiscoveryFilter()).matches(device) }
    }

    func index(ofDevice path: String) -> Int? { devices.firstIndex { $0.path == path } }
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
    case work(device: Int, GATTBoardHost.Work)
    /// The board's reset time is over.
    case boot(device: Int)
    /// GATT discovery of link `epoch` is over.
    case resolve(device: Int, epoch: Int)
    /// Advertisements reach the adapter.
    case advertise
    /// A connection event: the oldest notification in the device's outbox goes on air.
    case deliver(device: Int)
}
