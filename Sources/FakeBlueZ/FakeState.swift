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
    /// Set on the device of a board's bootloader at the next address: the index of the board's
    /// own device, whose board this device plays while the bootloader runs.
    var owner: Int?
    /// The bonded buttonless entry handed this link's bond to the bootloader (V2 bootloader
    /// "peer data"), so the bootloader encrypts with BlueZ's key.
    var handedOverBond = false
    /// The `Name` last exported, so that a change (to and from "DfuTarg") is signalled.
    var shownName: String?

    init(spec: FakeBoard, adapterPath: String, owner: Int? = nil) {
        self.spec = spec
        self.owner = owner
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

    /// The name in this device's trace lines.
    var name: String { spec.name ?? spec.board.profile.name }
    var behaviour: FakeBoardBehaviour { spec.behaviour }
    /// The hostility of the object at `path` (the seed picks per object and property).
    func hostile(at path: String) -> HostileDBus {
        HostileDBus(modes: spec.behaviour.hostile, seed: spec.behaviour.hostileSeed, salt: path)
    }

    /// The device of `board`'s bootloader at the next address, playing the board of device `owner`.
    /// That bootloader is built without bonds: open, no pairing (nRF5 SDK `nrf_dfu_ble.c`, the
    /// `NRF_DFU_BLE_REQUIRES_BONDS 0` paths).
    static func bootloader(of board: FakeBoard, owner: Int, adapterPath: String) -> FakeDevice {
        var behaviour = FakeBoardBehaviour()
        behaviour.rssi = board.behaviour.rssi
        behaviour.gattCache = board.behaviour.gattCache
        let spec = FakeBoard(board: board.board, name: NordicGATT.bootloaderName,
                             address: FakeBlueZ.nextAddress(after: board.address), behaviour: behaviour)
        return FakeDevice(spec: spec, adapterPath: adapterPath, owner: owner)
    }
}

/// A discovery filter set with `Adapter1.SetDiscoveryFilter`.
struct DiscoveryFilter: Sendable, Equatable {
    var uuids: Set<String> = []
    var rssi: Int16?
    var transport = "auto"
    var pattern: String?

    func matches(address: String, name: String, uuids advertised: [String], rssi seen: Int16) -> Bool {
        if transport == "bredr" { return false }
        if !uuids.isEmpty, uuids.isDisjoint(with: advertised.map { $0.lowercased() }) { return false }
        if let rssi, seen < rssi { return false }
        if let pattern, !pattern.isEmpty, !(address.uppercased().hasPrefix(pattern.uppercased()) || name.hasPrefix(pattern)) {
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

    /// Whether any discovering client's filter lets device `i` through.
    func discovers(_ i: Int) -> Bool {
        let d = devices[i]
        return sessions.contains {
            (filters[$0] ?? DiscoveryFilter()).matches(address: d.spec.address, name: advertisedName(i),
                                                       uuids: advertisedUUIDs(i), rssi: d.behaviour.rssi)
        }
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

    /// The devices that play the board of device `i` (its own, and its bootloader's at the next address).
    func identities(of i: Int) -> [Int] {
        let b = boardIndex(i)
        return devices.indices.filter { boardIndex($0) == b }
    }

    /// Whether device `i` advertises now: the board is up and connectable, and this is the
    /// address it advertises at in its current mode.
    func isAdvertising(_ i: Int) -> Bool {
        let own = devices[boardIndex(i)]
        let board = own.host.board
        guard !own.behaviour.absent, !own.host.isDown, board.isConnectable else { return false }
        if devices[i].owner != nil { return board.inNordicBootloader }
        if own.behaviour.bootloaderAtNextAddress, board.inNordicBootloader { return false }
        // A Nordic bootloader advertises all the time, even for a program that keeps Bluetooth off.
        return !(own.behaviour.pairingModeOnly && board.mode != .pairing && !board.inNordicBootloader)
    }

    /// The name device `i` advertises now: "DfuTarg" while the board's bootloader runs
    /// (nordic-dfu.md §2.2, §3.2), BlueZ taking it from the advertisement and the GAP name
    /// (BlueZ `profiles/gap/gas.c`, `src/device.c` `btd_device_device_set_name`).
    func advertisedName(_ i: Int) -> String {
        let board = board(of: i)
        if board.inNordicBootloader { return board.advertisedName }
        return devices[i].spec.name ?? board.profile.name
    }

    /// The service UUIDs device `i` advertises: the scenario's, else the services the board offers now.
    func advertisedUUIDs(_ i: Int) -> [String] {
        devices[i].behaviour.advertisedUUIDs ?? board(of: i).offeredServices.sorted().map(\.uuidString)
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
    case advertise
    /// A connection event: the oldest notification in the device's outbox goes on air.
    case deliver(device: Int)
}
