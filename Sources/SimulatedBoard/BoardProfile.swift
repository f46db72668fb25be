import FirmwareImage
import Transport

/// The services a simulated board can offer.
public enum SimulatedServiceKind: String, Sendable, Codable, CaseIterable {
    /// The micro:bit / Calliope partial-flashing service.
    case partialFlashing = "partial-flashing"
    /// The McuMgr SMP server with MCUboot slots (`SMPServer`).
    case smp = "mcumgr-smp"
    /// Nordic Secure DFU: the buttonless entry (FE59) and the micro:bit V2 / Calliope mini 3
    /// secure bootloader behind it (`SecureDFUBootloader`).
    case secureDFU = "nordic-secure-dfu"
    /// Nordic legacy DFU: the micro:bit DFU control service and the nRF51 legacy bootloader
    /// behind it (`LegacyDFUBootloader`).
    case legacyDFU = "nordic-legacy-dfu"
}

/// Which runtime's partial-flashing behaviour the board follows where CODAL and DAL differ.
public enum BoardRuntime: String, Sendable, Codable {
    /// micro:bit V2 / Calliope mini 3 (nRF52833).
    case codal
    /// micro:bit V1 / Calliope mini 1, 2 (nRF51822).
    case dal
}

/// What a simulated board is: which board, how it advertises, what it offers.
public struct BoardProfile: Sendable, Equatable, Codable {
    public var board: Board
    /// The advertised name.
    public var name: String
    /// A Bluetooth address, for display.
    public var address: String
    public var services: [SimulatedServiceKind]
    /// Whether the user's program keeps Bluetooth on in application mode (MakeCode's
    /// Bluetooth extension). When false the board is only connectable in pairing mode.
    public var bluetoothInApplicationMode: Bool
    /// The board's ATT MTU (CODAL builds 23: 20-byte writes).
    public var attMTU: Int
    /// The board's LL data length (CODAL builds 27).
    public var dataLength: Int
    /// The runtime's `FLASH_PROGRAM_END`: where the runtime image ends. The memory map scan
    /// starts at the next page boundary. Nil: derived from the image the board starts with.
    public var runtimeEnd: UInt32?

    public init(
        board: Board, name: String? = nil, address: String = "F0:0D:00:00:00:01",
        services: [SimulatedServiceKind] = [.partialFlashing], bluetoothInApplicationMode: Bool = false,
        attMTU: Int = 23, dataLength: Int = 27, runtimeEnd: UInt32? = nil
    ) {
        self.board = board
        self.name = name ?? (board.rawValue.hasPrefix("calliope") ? "Calliope mini [sim]" : "BBC micro:bit [sim]")
        self.address = address
        self.services = services
        self.bluetoothInApplicationMode = bluetoothInApplicationMode
        self.attMTU = attMTU
        self.dataLength = dataLength
        self.runtimeEnd = runtimeEnd
    }

    public var family: ChipFamily { board.family }
    public var layout: MemoryLayout { board.family.layout }
    public var runtime: BoardRuntime { board.family == .nrf51 ? .dal : .codal }
}

/// Keys of the board's persistent key-value storage that flashing depends on.
public enum StorageKey {
    /// Set by the first partial-flashing block after boot, removed by END_OF_TRANSMISSION;
    /// while present every boot goes to pairing mode.
    public static let flashIncomplete = "flashIncomplete"
    /// Set by `FF 00`; the next boot goes to pairing mode and removes it.
    public static let rebootMode = "RebootMode"
}
