import BlueZTransport
import DBus
import FirmwareImage
import LinkModel
import Flashing
import McuMgr

/// Everything `BlueZFlasher` needs to know besides the file and the boards.
///
/// The defaults are the command line's: `bitflash flash --device` with no options runs
/// exactly these settings.
public struct BlueZFlashSettings: Sendable {
    /// The Bluetooth adapter (`hci0`), or nil for the first one switched on.
    public var adapter: String?
    /// Several adapters to spread a class over (`hci0`, `hci1`; `all` for every adapter switched
    /// on). Empty: `adapter` alone.
    public var adapters: [String] = []
    /// Boards connected at once per adapter. No controller reports how many LE connections it
    /// holds; 5 is what common ones hold (AdapterProfile, docs/adapters.md), and a flash that
    /// meets a refusal while other boards are connected lowers it for that adapter.
    public var maxConnectionsPerAdapter = AdapterProfile.unknown.maxConnections
    /// The D-Bus address of BlueZ's bus, or nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS`,
    /// else the standard socket). Tests point it at a private bus with a fake BlueZ.
    public var busAddress: String?
    /// How long to look for a board (and for a board BlueZ forgot after a reset).
    public var scanTimeout: Duration = .seconds(10)
    /// How long one connect, and the wait for the board's services, may take.
    public var connectTimeout: Duration = .seconds(20)
    /// The limit for one transport call of a flow (a write, a subscription, a reconnection).
    public var operationTimeout: Duration = .seconds(20)
    /// Pair (Just Works) when a board asks for a bond; when false such boards fail.
    public var pairWhenRequired = true
    /// After a Nordic bootloader entry: how long to wait for the board at its own address
    /// before looking for its bootloader at the next address.
    public var bootloaderAddressWindow: Duration = .seconds(5)
    /// How the flashing session runs: mode, preferences, timeouts of each protocol.
    public var options = FlashOptions()
    /// The policy's settings: the board to plan for instead of the one detected, the MCUboot image
    /// a full update uploads, whether overridable problems are let through (`FlashPolicy`).
    public var plan = PlanSettings()
    /// Where interrupted partial flashes are recorded and continued from; nil keeps no records.
    public var resumeStore: (any ResumeRecordStore)? = FileResumeStore.standard()
    /// Where the board flashed last is kept (a flash without a named board takes it); nil keeps none.
    public var lastBoard: LastBoardStore? = LastBoardStore.standard()
    /// Forget any record and start a partial flash from its first block.
    public var startOver = false
    /// The command line's defaults.
    public init() {}

    var bus: DBusBusAddress { busAddress.map { .address($0) } ?? .system }

    var transportSettings: BlueZDeviceTransport.Settings {
        var s = BlueZDeviceTransport.Settings()
        s.servicesResolvedTimeout = connectTimeout
        s.rediscoverTimeout = scanTimeout
        s.pairWhenRequired = pairWhenRequired
        s.bootloaderAddressWindow = bootloaderAddressWindow
        return s
    }
}
