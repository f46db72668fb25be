import ArgumentParser
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
struct SimProfile: Equatable, CustomStringConvertible, ExpressibleByArgument {
    var board: Board
    var mcuboot: Bool

    static let `default` = SimProfile(board: .microbitV2, mcuboot: true)

    static var all: [SimProfile] {
        Board.allCases.flatMap { [SimProfile(board: $0, mcuboot: true), SimProfile(board: $0, mcuboot: false)] }
    }

    var description: String { board.rawValue + (mcuboot ? "-mcuboot" : "") }

    init(board: Board, mcuboot: Bool) {
        self.board = board
        self.mcuboot = mcuboot
    }

    init?(argument: String) {
        var name = argument.lowercased()
        let mcuboot = name.hasSuffix("-mcuboot")
        if mcuboot { name.removeLast("-mcuboot".count) }
        guard let board = Board(userName: name) else { return nil }
        self.init(board: board, mcuboot: mcuboot)
    }

    static var allValueStrings: [String] { all.map(\.description) }

    /// A board of this profile holding `image` (for an MCUboot board, its application as a
    /// confirmed image in the primary slot), connectable in application mode.
    func makeBoard(holding image: MemoryImage, name: String, address: String) throws -> SimulatedBoard {
        var memory = image
        var profile = SimulatedBoard.stockProfile(board, name: name, address: address)
        if mcuboot {
            let standard = SimulatedBoard.mcuMgrProfile(board)
            profile = BoardProfile(board: board, name: name, address: address, services: standard.services,
                                   bluetoothInApplicationMode: true, attMTU: standard.attMTU, dataLength: standard.dataLength)
            guard let app = try FlashPlan.applicationImage(of: image, family: board.family) else {
                throw CLIError(.badFirmware, "the file holds no application for \(board.displayName)")
            }
            let slot = SMPServerConfiguration.standard(for: board.family.layout, attMTU: profile.attMTU).primarySlotStart
            try memory.write(app.bytes, at: slot, overwrite: true)
        }
        return try SimulatedBoard(profile: profile, image: memory)
    }

    /// The board a fresh simulated board holds: the sample runtime r1 with the heart program.
    func factoryImage() -> MemoryImage {
        SampleFirmware.image(family: board.family, runtime: .r1, program: .heart)
    }

    /// The image of a firmware file for this profile's board (for `sim reset --from`).
    func image(fromFile path: String) throws -> MemoryImage {
        let firmware = try FirmwareFileLoading.loadForFlash(path)
        do {
            return try firmware.image(for: board)
        } catch let error as FirmwareImageError {
            throw CLIError(.badFirmware, "\(path): \(error.message)")
        }
    }
}
