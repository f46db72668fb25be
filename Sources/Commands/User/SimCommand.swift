import ArgumentParser
import Crypto
import Diagnostics
import FirmwareImage
import Foundation
import Laboratory
import PartialFlashing
import SimulatedBoard

/// `bitflash sim ...`: the simulated boards.
struct SimCommand: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        Front.current == .lab
            ? CommandConfiguration(
                commandName: "sim",
                abstract:
                    "The simulated boards: set them up, serve them over UDP or a fake BlueZ, replay traces, run the fault campaign.",
                subcommands: [
                    SimResetCommand.self, SimShowCommand.self, SimSamplesCommand.self, SimServeCommand.self,
                    SimBlueZCommand.self, SimCampaignCommand.self, SimReplayCommand.self
                ])
            : CommandConfiguration(
                commandName: "sim",
                abstract: "Set up and look at the simulated boards that --simulate flashes.",
                discussion: "Serving them over UDP or BlueZ, the campaign and replay are in `bitflash-lab sim`.",
                subcommands: [SimResetCommand.self, SimShowCommand.self])
    }
}

/// `bitflash sim reset [--profile P] [--from FILE]`: a board holding a given file (or the sample program).
struct SimResetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Put a firmware file (default: the sample runtime r1 with the heart program) on simulated boards.")

    @Option(
        help: ArgumentHelp(
            "The kind of board: \(SimProfile.allValueStrings.joined(separator: ", ")).", valueName: "PROFILE"))
    var profile: SimProfile = .default

    @Option(help: ArgumentHelp("The firmware the board holds afterwards.", valueName: "FILE"))
    var from: String?

    @Option(
        parsing: .unconditional, help: Limits.boards.help("How many boards (sim, or sim-1 … sim-N)", valueName: "N"),
        transform: Limits.boards.transform)
    var boards: Int = 1

    @Flag(
        name: .customLong("no-app-bluetooth"),
        help:
            "The program keeps Bluetooth off in application mode (a MakeCode program without the Bluetooth extension): the board is reachable only in pairing mode."
    )
    var noAppBluetooth = false

    @Flag(
        name: .customLong("pairing-mode"),
        help: "Start the boards in pairing mode, as after A+B and reset.")
    var pairingMode = false

    @Flag(
        name: .customLong("stuck-in-bootloader"),
        help:
            "Leave the boards as an interrupted Nordic DFU does: old application invalid, in the bootloader (\"DfuTarg\"). Stock profiles only."
    )
    var stuckInBootloader = false

    @OptionGroup var stateFolder: StateFolderOptions

    func run() async throws {
        try await runCommand {
            let image = try from.map(profile.image(fromFile:)) ?? profile.factoryImage()
            let store = SimStore(option: stateFolder.simState)
            let lock = try StateFolderLock.hold(store.directory, waitSeconds: stateFolder.stateWait)
            defer { withExtendedLifetime(lock) {} }
            // A user's file with a board's name stays, and stops the reset before anything changed.
            for name in SimStore.names(count: boards) { try store.requireOwnFile(name) }
            for name in store.savedNames() { try? FileManager.default.removeItem(at: store.url(of: name)) }
            for (i, name) in SimStore.names(count: boards).enumerated() {
                var board = try profile.makeBoard(
                    holding: image, name: name, address: SimStore.address(i + 1),
                    applicationBluetooth: !noAppBluetooth)
                if pairingMode { board.reset(holdingButtons: true) }
                if stuckInBootloader {
                    guard !profile.mcuboot else {
                        throw CLIError(
                            .usage,
                            "--stuck-in-bootloader needs a stock profile with a Nordic bootloader "
                                + "(such as \(SimProfile(board: profile.board, mcuboot: false))), not \(profile)")
                    }
                    try board.strandInBootloader()
                }
                try store.save(board, as: name)
            }
            let what = from.map { ($0 as NSString).lastPathComponent } ?? "the sample program (runtime r1, heart)"
            if stuckInBootloader {
                StdOut.write("the boards are in their Nordic bootloader (\"DfuTarg\"): flash a file to recover them\n")
            }
            if noAppBluetooth, !pairingMode, !stuckInBootloader {
                StdOut.write(
                    "the boards run a program without Bluetooth: flash them after `bitflash sim reset --pairing-mode`, "
                        + "as a user presses A+B and reset\n")
            }
            StdOut.write(
                "\(boards) simulated \(profile) board\(boards == 1 ? "" : "s") in \(store.directory.path) now hold\(boards == 1 ? "s" : "") \(what)\n"
            )
            return .ok
        }
    }
}

/// `bitflash sim show`: the mode, memory map and slots of each simulated board.
struct SimShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the simulated boards' state.")

    @Option(name: .customLong("sim-state"), help: ArgumentHelp("Folder of the simulated boards.", valueName: "DIR"))
    var simState: String?

    @Flag(help: "Print JSON.")
    var json = false

    struct Shown: Codable {
        struct Region: Codable { var id: Int; var start: String; var end: String; var hash: String }
        var name: String
        var board: String
        var address: String
        var services: [String]
        var mode: String
        var flashIncomplete: Bool
        var regions: [Region]
        /// Simulator state: SHA-256 of the application region of the board's flash, the pages the
        /// runtime keeps its own keys in read as erased, to compare with `bitflash convert FILE
        /// --to bin` and between boards (a real client cannot read this).
        var applicationSHA256: String
    }

    /// The application region's SHA-256 with the runtime's storage pages read as erased.
    static func applicationHash(_ b: SimulatedBoard) -> String {
        let app = b.profile.board.family.layout.application
        guard var bytes = try? b.readFlash(app) else { return "unreadable" }
        let page = Int(b.profile.board.family.pageSize)
        for p in b.runtimeStoragePages where app.contains(p) {
            let at = Int(p - app.lowerBound)
            bytes.replaceSubrange(at..<(at + page), with: repeatElement(0xFF, count: page))
        }
        return Hex.bytes(SHA256.hash(data: bytes), uppercase: false)
    }

    func run() async throws {
        try await runCommand {
            let store = SimStore(option: simState)
            let names = store.savedNames()
            guard !names.isEmpty else {
                throw CLIError(
                    .boardNotFound,
                    "no simulated board in \(store.directory.path): run `bitflash sim reset` or `bitflash flash FILE --simulate`"
                )
            }
            var shown: [Shown] = []
            for name in names {
                guard let b = try store.load(name) else { continue }
                shown.append(
                    Shown(
                        name: name, board: b.profile.board.rawValue, address: b.profile.address,
                        services: b.profile.services.map(\.rawValue),
                        mode: b.inNordicBootloader
                            ? "bootloader (DfuTarg)" : b.mode == .pairing ? "pairing" : "application",
                        flashIncomplete: b.flashIncomplete,
                        regions: b.memoryMap.map {
                            Shown.Region(
                                id: Int($0.id), start: Hex.address($0.start), end: Hex.address($0.end),
                                hash: $0.hash.hexString)
                        },
                        applicationSHA256: Self.applicationHash(b)))
            }
            if json {
                StdOut.write(try JSONText.document(shown) + "\n")
                return .ok
            }
            for s in shown {
                StdOut.write(
                    "\(s.name): \(s.board) at \(s.address), services \(s.services.joined(separator: " + ")), "
                        + "\(s.mode) mode\(s.flashIncomplete ? ", flash incomplete" : "")\n")
                for r in s.regions {
                    let label = ["SoftDevice", "runtime", "program"][min(r.id, 2)]
                    StdOut.write("  region \(r.id) (\(label)): \(r.start)-\(r.end) hash \(r.hash)\n")
                }
                StdOut.write("  simulator state: application region SHA-256 \(s.applicationSHA256)\n")
            }
            return .ok
        }
    }
}
