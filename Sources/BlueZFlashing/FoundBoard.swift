import BlueZTransport
import Transport

/// A board seen in a scan, as `bitflash scan` lists it.
public struct FoundBoard: Sendable, Equatable, Codable {
    /// The advertised name (`BBC micro:bit [zotig]`, `DfuTarg`), when one was seen.
    public var name: String?
    /// The Bluetooth address, `AA:BB:CC:DD:EE:FF`: what to pass to `BlueZFlasher.flash`.
    public var address: String
    /// The signal strength of its last advertisement, when one was seen in this scan.
    public var rssi: Int?
    /// The services it advertised (or, once connected, offers), named: `partial-flashing`,
    /// `mcumgr`, `dfu-control`, `secure-dfu`, `legacy-dfu`, or the UUID.
    public var services: [String]
    /// A guess of its kind from its name and services: `micro:bit`, `Calliope mini`,
    /// `micro:bit with MCUboot (full updates)`, `unknown`.
    public var kind: String
    /// BlueZ holds a connection to it (this or another program).
    public var connected: Bool
    /// BlueZ holds a bond with it.
    public var paired: Bool

    /// The board as BlueZ describes `device`.
    public init(_ device: BlueZDevice) {
        name = device.name
        address = device.address
        rssi = device.rssi
        services = device.services.map(Self.serviceName)
        kind = device.boardKindGuess
        connected = device.connected
        paired = device.paired
    }

    /// The short name of a service bitflash knows, else its UUID.
    public static func serviceName(_ uuid: BLEUUID) -> String {
        switch uuid {
        case KnownGATT.partialFlashingService: return "partial-flashing"
        case KnownGATT.smpService: return "mcumgr"
        case KnownGATT.microbitDFUControlService: return "dfu-control"
        case KnownGATT.secureDFUService: return "secure-dfu"
        case KnownGATT.legacyDFUService: return "legacy-dfu"
        default: return uuid.uuidString
        }
    }
}

extension BlueZFlasher {
    /// The boards in range after scanning for `duration` (default: the settings' scan
    /// timeout), strongest first: devices that advertise a flashing service or a board's
    /// name, and those BlueZ already knows. With `everything`, every Bluetooth LE device seen.
    ///
    /// The scan sets no service filter: a board in pairing mode may advertise only its name.
    /// - Throws: `BlueZError` when Bluetooth is not available.
    public func scan(for duration: Duration? = nil, everything: Bool = false) async throws -> [FoundBoard] {
        let bus = try await BlueZBus.open(bus: settings.bus)
        defer { bus.close() }
        let devices = try await BlueZScanner(bus: bus, adapter: settings.adapter)
            .scan(timeout: duration ?? settings.scanTimeout, services: nil)
        return devices.filter { everything || $0.looksFlashable }.map(FoundBoard.init)
    }
}
