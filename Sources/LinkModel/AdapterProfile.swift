/// A Bluetooth adapter (controller) as bitflash plans for it: how many LE connections it holds
/// at once as a central.
///
/// No controller vendor documents this figure and no HCI command reports it; the figures below
/// are community measurements and maintainers' rules of thumb (docs/adapters.md):
/// - CSR8510 A10 dongles: 5 (Home Assistant's Bluetooth integration page, "Cambridge Silicon Radio
///   (CSR) based adapters … can hold five (5) connections"; noble's README; bleak-retry-connector
///   PR #67 "most of the CSR adapters only support 5 slots").
/// - Broadcom BCM20702 dongles: 7 (Home Assistant, "Broadcom (BCM) based adapters … seven (7)";
///   bleak-retry-connector PR #67).
/// - Raspberry Pi 3B+/4 on-board CYW43455: 8 (one measurement on a 3B+, 2019: 8 reliable, 9
///   marginal, the 10th refused with HCI 0x0D "Connection Rejected due to Limited Resources").
/// - Anything else (Intel AX200/AX210, Realtek RTL8761, Qualcomm …): no figure found. bitflash
///   assumes 5, the default Home Assistant assumes for any local adapter
///   (bluetooth-adapters `DEFAULT_CONNECTION_SLOTS = 5`), and backs off when a controller refuses.
public struct AdapterProfile: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    /// The profile's name (`csr8510`, `bcm20702`, `cyw43455`, `unknown`, `unlimited`).
    public var name: String
    /// The controller in words, as reports print it.
    public var controller: String
    /// LE connections the controller holds at once as a central.
    public var maxConnections: Int
    /// Whether `maxConnections` comes from a measurement (false: an assumed default).
    public var measured: Bool

    public init(name: String, controller: String, maxConnections: Int, measured: Bool) {
        self.name = name
        self.controller = controller
        self.maxConnections = max(1, maxConnections)
        self.measured = measured
    }

    /// CSR8510 A10 USB dongles: 5.
    public static let csr8510 = AdapterProfile(
        name: "csr8510", controller: "CSR8510 A10", maxConnections: 5, measured: true)
    /// Broadcom BCM20702 USB dongles: 7.
    public static let bcm20702 = AdapterProfile(
        name: "bcm20702", controller: "Broadcom BCM20702", maxConnections: 7, measured: true)
    /// The Raspberry Pi 3B+/4 on-board Cypress CYW43455: 8 (9 marginal).
    public static let cyw43455 = AdapterProfile(
        name: "cyw43455", controller: "Raspberry Pi 3B+/4 CYW43455", maxConnections: 8, measured: true)
    /// A controller with no known figure (Intel AX200/AX210, Realtek RTL8761 …): 5 assumed.
    public static let unknown = AdapterProfile(
        name: "unknown", controller: "controller of unknown capacity", maxConnections: 5, measured: false)
    /// No limit: not a real controller; the simulation's default for its own tests, where a limit
    /// is not what is being tested.
    public static let unlimited = AdapterProfile(
        name: "unlimited", controller: "no connection limit (not a real controller)", maxConnections: 1_000_000,
        measured: false)

    /// `connections` as a limit, or nil when it is `unlimited`'s (no limit at all).
    public static func limit(_ connections: Int) -> Int? {
        connections < unlimited.maxConnections ? connections : nil
    }

    /// The named profiles, as `--sim-adapter` accepts them (`unlimited` is for tests only).
    public static let named: [AdapterProfile] = [.csr8510, .bcm20702, .cyw43455, .unknown]

    /// Looks up a profile by name (`csr8510`, `bcm20702`, `cyw43455`, `unknown`; `pi` for the
    /// CYW43455), or `NAME:N` / a bare `N` for a controller that holds `N` connections.
    public init(named text: String) throws {
        let t = text.lowercased()
        // Every part counts: `:3` is not `3`, and `csr8510:` has no count.
        let parts = t.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let base = parts.first ?? ""
        func count(_ s: String) -> Int? { !s.isEmpty && s.allSatisfy({ ("0"..."9").contains($0) }) ? Int(s) : nil }
        var profile: AdapterProfile
        if let p = Self.named.first(where: { $0.name == base }) {
            profile = p
        } else if ["pi", "rpi", "raspberrypi"].contains(base) {
            profile = .cyw43455
        } else if parts.count == 1, let n = count(base) {
            profile = AdapterProfile(
                name: "limit-\(n)", controller: "a controller of \(n) connections", maxConnections: n,
                measured: false)
            guard (1...64).contains(n) else { throw LinkModelError.unknownAdapter(text) }
            self = profile
            return
        } else {
            throw LinkModelError.unknownAdapter(text)
        }
        if parts.count == 2 {
            guard let n = count(parts[1]), (1...64).contains(n) else { throw LinkModelError.unknownAdapter(text) }
            profile.maxConnections = n
            profile.name += ":\(n)"
        }
        self = profile
    }

    public var description: String {
        "\(name) (\(controller), \(maxConnections) connections\(measured ? "" : ", assumed"))"
    }
}
