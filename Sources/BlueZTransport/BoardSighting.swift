import Transport
import PartialFlashingFrames
import SMP

/// What a board is running, as far as its advertisement tells.
public enum AdvertisedMode: String, Sendable, Equatable, Codable, CaseIterable {
    /// The user's program (application mode).
    case application
    /// Pairing mode ("Bluetooth mode": A+B + reset, or after an interrupted partial flash).
    case pairing
    /// The Nordic bootloader ("DfuTarg"), waiting for a DFU.
    case bootloader
    /// The advertisement does not tell (see `BoardSighting.recognize`).
    case unknown
}

/// The family of a board, as far as its advertisement tells.
public enum AdvertisedBoard: String, Sendable, Equatable, Codable {
    case microbit = "micro:bit"
    case calliope = "Calliope mini"
    /// A board whose application advertises the McuMgr (SMP) service.
    case mcuboot = "McuMgr board"
    /// A Nordic bootloader: V2/Calliope mini 3 (Secure DFU, FE59) or V1/Calliope mini 1-2
    /// (legacy DFU), or any other Nordic device in its bootloader.
    case nordicBootloader = "Nordic bootloader"
    /// Not recognised as a board (only listed by `scan --all`).
    case other
}

/// One board (or, for `scan --all`, any device) seen in range during a scan.
public struct BoardSighting: Sendable, Equatable, Codable {
    public var name: String?
    public var address: String
    /// The signal strength of its last advertisement; nil for a board seen only as connected.
    public var rssi: Int?
    public var mode: AdvertisedMode
    /// BlueZ holds a bond with it (`Device1.Bonded`, else `Paired`).
    public var bonded: Bool
    public var board: AdvertisedBoard

    public init(name: String?, address: String, rssi: Int?, mode: AdvertisedMode, bonded: Bool, board: AdvertisedBoard)
    {
        self.name = name
        self.address = address
        self.rssi = rssi
        self.mode = mode
        self.bonded = bonded
        self.board = board
    }

    /// The names the runtimes advertise, without the friendly-name suffix: CODAL
    /// `MicroBitBLEManager.cpp` (`MICROBIT_BLE_DEVICE_NAME` "BBC micro:bit"; the Calliope fork
    /// "Calliope mini"), DAL the same (`MicroBitBLEManager.cpp` L299-306).
    public static let runtimeNames: [(String, AdvertisedBoard)] = [
        ("BBC micro:bit", .microbit), ("Calliope mini", .calliope)
    ]

    /// What bitflash can tell of `device` from BlueZ's view of it; nil when it is not a board.
    ///
    /// The rules, from what the boards advertise (flags and the complete local name only, no
    /// service UUIDs, in application and pairing mode; partial-flashing-protocol.md §3.7):
    /// - **bootloader**: the name `DfuTarg` (the bootloaders' advertised and GAP name: the V2
    ///   bootloader `NRF_DFU_BLE_ADV_NAME`, advertised with FE59; the V1 bootloader with the
    ///   legacy DFU service 00001530-1212-…).
    /// - **application**: the runtime's name without a suffix (`BBC micro:bit`,
    ///   `Calliope mini`): the runtimes drop the `[zotig]` suffix only in application mode with
    ///   the whitelist on (CODAL `MicroBitBLEManager.cpp` L266-281; DAL L299-306), which is the
    ///   one case a board advertises without being discoverable (flags 0x04, bonded hosts only).
    ///   Also a board advertising the McuMgr service (Zephyr's `smp_svr` advertises it from the
    ///   application; MCUboot itself has no Bluetooth).
    /// - **pairing**: the name with the suffix (`BBC micro:bit [zotig]`) from a board BlueZ
    ///   holds a bond with: a bond means a build with security, whose whitelist drops the
    ///   suffix in application mode, so the suffix means pairing mode.
    /// - **unknown**: the name with the suffix from a board without a bond: pairing mode, or
    ///   application mode of a build without whitelist (MakeCode's "No pairing required", the
    ///   Calliope mini 1/2 default); both advertise flags 0x06 and the same name, only their
    ///   advertising interval differs (200 ms and 50 ms), which BlueZ does not report. Also any
    ///   other name after the runtime's, and devices recognised only by the flashing services
    ///   BlueZ resolved on an earlier connection.
    public static func recognize(_ device: BlueZDevice) -> BoardSighting? {
        let advertised = Set(device.services)
        func sighting(_ mode: AdvertisedMode, _ board: AdvertisedBoard) -> BoardSighting {
            BoardSighting(
                name: device.name, address: device.address, rssi: device.rssi, mode: mode,
                bonded: device.bonded, board: board)
        }
        if device.name == "DfuTarg" { return sighting(.bootloader, .nordicBootloader) }
        if let name = device.name, let (base, board) = runtimeNames.first(where: { name.hasPrefix($0.0) }) {
            let rest = name.dropFirst(base.count)
            if rest.isEmpty { return sighting(.application, board) }
            if rest.hasPrefix(" ["), rest.hasSuffix("]"), rest.count > 3 {
                return sighting(device.bonded ? .pairing : .unknown, board)
            }
            return sighting(.unknown, board)
        }
        if advertised.contains(SMPGATT.service) {
            return sighting(.application, .mcuboot)
        }
        if advertised.contains(PartialFlashingGATT.service) { return sighting(.unknown, .other) }
        return nil
    }

    /// Any device, as `scan --all` lists it: a board as `recognize` sees it, else `other`.
    public static func any(_ device: BlueZDevice) -> BoardSighting {
        recognize(device)
            ?? BoardSighting(
                name: device.name, address: device.address, rssi: device.rssi, mode: .unknown,
                bonded: device.bonded, board: .other)
    }
}
