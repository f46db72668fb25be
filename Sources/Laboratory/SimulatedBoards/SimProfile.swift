import FirmwareImage
import Flashing
import SampleFirmware
import SimulatedBoard

/// A simulated board kind, as users name it on the command line.
///
/// `microbit-v2` and the other plain board names are stock boards: the partial-flashing
/// service and the board's Nordic bootloader (Secure DFU on micro:bit V2 and Calliope mini 3,
/// legacy DFU on micro:bit V1 and Calliope mini 1/2), which takes a full update.
/// `microbit-v2-mcuboot` and the like have an MCUboot bootloader instead, updated over the
/// McuMgr (SMP) service.
public struct SimProfile: Sendable, Equatable, CustomStringConvertible {
    public var board: Board
    public var mcuboot: Bool

    public static let `default` = SimProfile(board: .microbitV2, mcuboot: true)

    public static var all: [SimProfile] {
        Board.allCases.flatMap { [SimProfile(board: $0, mcuboot: true), SimProfile(board: $0, mcuboot: false)] }
    }

    public var description: String { board.rawValue + (mcuboot ? "-mcuboot" : "") }

    public init(board: Board, mcuboot: Bool) {
        self.board = board
        self.mcuboot = mcuboot
    }

    /// The profile a user names (`microbit-v2`, `calliope-mini-3-mcuboot`, ...); nil for another name.
    public init?(argument: String) {
        var name = argument.lowercased()
        let mcuboot = name.hasSuffix("-mcuboot")
        if mcuboot { name.removeLast("-mcuboot".count) }
        guard let board = Board(userName: name) else { return nil }
        self.init(board: board, mcuboot: mcuboot)
    }

    public static var allValueStrings: [String] { all.map(\.description) }

    /// A board of this profile holding `image` (for an MCUboot board, its application as a
    /// confirmed image in the primary slot), connectable in application mode unless
    /// `applicationBluetooth` is false (a MakeCode program without the Bluetooth extension keeps
    /// Bluetooth off there; CODAL inc/MicroBitConfig.h: `MICROBIT_BLE_ENABLED 0` by default).
    public func makeBoard(
        holding image: MemoryImage, name: String, address: String,
        applicationBluetooth: Bool = true
    ) throws -> SimulatedBoard {
        var memory = image
        var profile = SimulatedBoard.stockProfile(
            board, name: name, address: address, bluetoothInApplicationMode: applicationBluetooth)
        if mcuboot {
            let standard = SimulatedBoard.mcuMgrProfile(board)
            profile = BoardProfile(
                board: board, name: name, address: address, services: standard.services,
                bluetoothInApplicationMode: applicationBluetooth, attMTU: standard.attMTU,
                dataLength: standard.dataLength)
            guard let app = try FlashPlan.applicationImage(of: image, family: board.family) else {
                throw SimStoreError.noApplication(board)
            }
            let slot = SMPServerConfiguration.standard(for: board.family.layout, attMTU: profile.attMTU)
                .primarySlotStart
            try memory.write(app.bytes, at: slot, overwrite: true)
        }
        return try SimulatedBoard(profile: profile, image: memory)
    }

    /// The board a fresh simulated board holds: the sample runtime r1 with the heart program.
    public func factoryImage() -> MemoryImage {
        SampleFirmware.image(family: board.family, runtime: .r1, program: .heart)
    }
}
