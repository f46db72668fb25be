/// How a fake board misbehaves beyond what its simulated firmware does: the faults of the
/// BLE link and of BlueZ that a client must survive.
public struct FakeBoardBehaviour: Sendable, Equatable, Codable {
    /// Reads, write requests and notification subscriptions fail with
    /// `org.bluez.Error.NotPermitted` "Not paired" until the device is paired (Just Works);
    /// write commands are dropped silently, as the board's stack drops them.
    public var requiresPairing = false
    /// `Pair` fails with `org.bluez.Error.AuthenticationFailed`.
    public var refusesPairing = false
    /// The first `Connect` calls fail, one failure per call, in this order.
    public var connectFailures: [ConnectFailure] = []
    /// The link comes up but `ServicesResolved` never becomes true (no GATT objects appear).
    public var servicesNeverResolve = false
    /// The link drops right after this many GATT writes reached the board (once).
    public var disconnectAfterWrites: Int?
    /// The board never advertises: it is never discovered.
    public var absent = false
    /// BlueZ holds a bond the board has forgotten: the device is known and paired from the
    /// start, `Connect` works, but notifications never arrive, reads and write requests fail
    /// with `org.bluez.Error.AuthenticationFailed`, and `Pair` says "Already Exists" until the
    /// device is removed (`Adapter1.RemoveDevice`) and paired afresh.
    public var staleBond = false
    /// The board starts in pairing mode, as after the user's A+B + reset (its program may
    /// still use Bluetooth; compare `pairingModeOnly`).
    public var startsInPairingMode = false
    /// BlueZ and the board hold a bond from an earlier pairing: the device is known (and
    /// paired) from the start. With `requiresPairing` (a build with the whitelist on), this is
    /// what makes the board advertise in application mode at all.
    public var bonded = false
    /// BlueZ's GATT cache (`[GATT] Cache = always`, its default): the GATT objects stay
    /// exported across disconnects, calls on them fail with `org.bluez.Error.Failed` "Not
    /// connected" meanwhile, and the next connection resolves from the cache at once. Off, the
    /// objects are removed at every disconnect and discovered afresh (`Cache = no`).
    public var gattCache = false
    /// The board's program does not use Bluetooth: it advertises only in pairing mode, and
    /// starts in pairing mode (as after the user's A+B + reset). After a flash it boots into
    /// its program and is gone until the user resets it into pairing mode again.
    public var pairingModeOnly = false
    /// `AcquireWrite` and `AcquireNotify` are answered `UnknownMethod`, as by a BlueZ older
    /// than 5.46: clients must write with `WriteValue` and take notifications as `PropertiesChanged`.
    public var refusesAcquire = false
    /// The sockets handed out by `AcquireWrite`/`AcquireNotify` are closed after this many
    /// writes came through them (once; the link stays up).
    public var acquiredSocketsCloseAfter: Int?
    /// D-Bus level hostility, for fuzz-style tests of a client.
    public var hostile: Set<HostileDBusMode> = []
    /// With `hostile`: each property and notification gets one of the modes, or none, as this
    /// seed picks (a fuzz-style run per seed); nil distorts everything with every mode.
    public var hostileSeed: UInt64?
    /// The RSSI reported when the board is seen advertising.
    public var rssi: Int16 = -60
    /// A fixed advertisement with these service UUIDs (the name as given, discoverable,
    /// whenever the board is connectable), for tests written before the boards' real
    /// advertising was modelled; nil: advertise as the board's firmware does (`FakeAdvertisement`).
    public var advertisedUUIDs: [String]?
    /// The board's Nordic bootloader advertises at the address + 1 (last octet, no carry), as
    /// a stock Nordic bootloader built without bonds does (nRF5 SDK `nrf_dfu_ble.c`
    /// `gap_address_change`), instead of at the application's address as every micro:bit and
    /// Calliope mini bootloader does. That bootloader is open: it needs no bond.
    public var bootloaderAtNextAddress = false

    public init() {}

    /// One way a `Connect` call fails.
    public enum ConnectFailure: String, Sendable, Equatable, Codable, CaseIterable {
        /// `org.bluez.Error.InProgress`: another connect seems to be pending.
        case inProgress = "in-progress"
        /// `org.bluez.Error.Failed` "le-connection-abort-by-local", after `Connected` went
        /// true and false again (BlueZ had half connected).
        case abortByLocal = "le-connection-abort-by-local"
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case requiresPairing, refusesPairing, connectFailures, servicesNeverResolve, disconnectAfterWrites, gattCache
        case absent, staleBond, bonded, pairingModeOnly, hostile, hostileSeed, rssi, advertisedUUIDs
        case refusesAcquire, acquiredSocketsCloseAfter, startsInPairingMode, bootloaderAtNextAddress
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        requiresPairing = try c.decodeIfPresent(Bool.self, forKey: .requiresPairing) ?? false
        refusesPairing = try c.decodeIfPresent(Bool.self, forKey: .refusesPairing) ?? false
        connectFailures = try c.decodeIfPresent([ConnectFailure].self, forKey: .connectFailures) ?? []
        servicesNeverResolve = try c.decodeIfPresent(Bool.self, forKey: .servicesNeverResolve) ?? false
        disconnectAfterWrites = try c.decodeIfPresent(Int.self, forKey: .disconnectAfterWrites)
        absent = try c.decodeIfPresent(Bool.self, forKey: .absent) ?? false
        gattCache = try c.decodeIfPresent(Bool.self, forKey: .gattCache) ?? false
        pairingModeOnly = try c.decodeIfPresent(Bool.self, forKey: .pairingModeOnly) ?? false
        staleBond = try c.decodeIfPresent(Bool.self, forKey: .staleBond) ?? false
        bonded = try c.decodeIfPresent(Bool.self, forKey: .bonded) ?? false
        startsInPairingMode = try c.decodeIfPresent(Bool.self, forKey: .startsInPairingMode) ?? false
        hostile = try c.decodeIfPresent(Set<HostileDBusMode>.self, forKey: .hostile) ?? []
        hostileSeed = try c.decodeIfPresent(UInt64.self, forKey: .hostileSeed)
        rssi = try c.decodeIfPresent(Int16.self, forKey: .rssi) ?? -60
        advertisedUUIDs = try c.decodeIfPresent([String].self, forKey: .advertisedUUIDs)
        refusesAcquire = try c.decodeIfPresent(Bool.self, forKey: .refusesAcquire) ?? false
        acquiredSocketsCloseAfter = try c.decodeIfPresent(Int.self, forKey: .acquiredSocketsCloseAfter)
        if let n = acquiredSocketsCloseAfter, n < 1 {
            throw DecodingError.dataCorruptedError(
                forKey: .acquiredSocketsCloseAfter, in: c, debugDescription: "must be at least 1")
        }
        bootloaderAtNextAddress = try c.decodeIfPresent(Bool.self, forKey: .bootloaderAtNextAddress) ?? false
        if let n = disconnectAfterWrites, n < 1 {
            throw DecodingError.dataCorruptedError(
                forKey: .disconnectAfterWrites, in: c,
                debugDescription: "must be at least 1")
        }
    }
}

/// D-Bus level hostility of a fake board (the board's firmware behaves; what BlueZ passes on
/// does not), to check that a client fails cleanly instead of crashing.
public enum HostileDBusMode: String, Sendable, Equatable, Codable, CaseIterable {
    /// Properties and notifications with the wrong D-Bus types (RSSI as a string, `Value` as
    /// a string, `UUIDs` as one string, `Flags` as a string, `MTU` as a 32-bit int, ...).
    case wrongTypes = "wrong-types"
    /// Oversized values: a 64 KiB name, 5,000 advertised UUIDs, 4 KiB notifications.
    case oversizedValues = "oversized-values"
    /// Missing properties: devices without `Address`/`Name`/`UUIDs`, characteristics without
    /// `UUID`/`Flags`, notifications as an invalidated `Value` without the bytes.
    case missingProperties = "missing-properties"
}
