import ArgumentParser
import Diagnostics
import FirmwareImage
import Flashing
import Foundation
import Laboratory
import McuMgr
import PartialFlashing
import PartialFlashingFrames
import SimulatedBoard
import SMP
import Transport

/// `bitflash info --simulate`: what a client can learn about a board without changing it.
struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a board's mode, memory map and hashes, and (MCUboot boards) its image slots.",
        discussion: """
            The memory map is read with the partial-flashing protocol (STATUS, REGION_INFO 1 and 2) \
            and the slots with an SMP image state read, exactly as on a real board; the board is not \
            switched to pairing mode and nothing is written. Lines marked "simulator state" show what \
            only the simulation knows.
            """)

    @Flag(
        name: .customLong("simulate"),
        help: ArgumentHelp(
            SimulateOption.help("Ask a simulated board (default microbit-v2-mcuboot)."), valueName: "PROFILE"))
    var simulateGiven = false

    /// The kind `--simulate` names (`info --simulate microbit-v1`).
    @Argument(help: .hidden)
    var profileWord: String?

    /// A simulated board's kind with `--simulate` (the default when it names none), else nil.
    var simulate: SimProfile? {
        simulateGiven
            ? SimulateOption.split(profileWord.map { [$0] } ?? [], simulate: true, keeping: 0).profile
                ?? .default : nil
    }

    @Option(help: ArgumentHelp("Ask a real board, by address or name, over Bluetooth.", valueName: "ADDR|NAME"))
    var device: String?

    @OptionGroup var bluetooth: BluetoothOptions

    @Option(
        name: .customLong("name"),
        help: ArgumentHelp("Which saved simulated board (default: sim, or the first saved).", valueName: "NAME"))
    var boardName: String?

    @OptionGroup var simulation: SimulationOptions

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(name: .short, help: "Show the protocol exchanges (-v), with more bytes (-vv).")
    var verbose: Int

    struct Shown: Codable {
        struct Region: Codable { var id: Int; var name: String; var start: String; var end: String; var hash: String }
        struct Slot: Codable {
            var image: Int; var slot: Int; var version: String; var hash: String?
            var bootable: Bool; var pending: Bool; var confirmed: Bool; var active: Bool; var permanent: Bool
        }
        struct SimulatorState: Codable {
            var flashIncomplete: Bool
            var profile: String
            /// False for a board not saved yet: the factory board `flash --simulate` starts from.
            var saved: Bool = true
        }
        var name: String
        var board: String
        var address: String
        var mode: String
        var protocolVersion: Int
        var regions: [Region]
        var slots: [Slot]?
        /// The board's full-update path: mcumgr, nordic-secure-dfu, nordic-legacy-dfu, or none.
        var fullUpdatePath: String?
        /// Only for simulated boards.
        var simulatorState: SimulatorState?
    }

    func validate() throws {
        if let word = profileWord, !simulateGiven || SimProfile(argument: word) == nil {
            throw ValidationError(
                "unexpected argument '\(word)'"
                    + (SimProfile(argument: word) != nil ? ": a simulated board's kind follows --simulate" : ""))
        }
        if device != nil, simulate != nil || boardName != nil {
            throw ValidationError("use either --device or --simulate/--name, not both")
        }
    }

    func run() async throws {
        try await runCommand {
            Verbose.bootstrap(verbose)
            if let device { return try await runOnDevice(device) }
            let store = SimStore(option: simulation.simState)
            let profile = simulate ?? .default
            let saved = store.savedNames()
            let name = boardName ?? (saved.contains("sim") || saved.isEmpty ? "sim" : saved[0])
            let board: SimulatedBoard
            var isSaved = true
            if let loaded = try store.load(name) {
                board = loaded
            } else if boardName == nil {
                isSaved = false
                board = try profile.makeBoard(holding: profile.factoryImage(), name: name, address: SimStore.address(1))
            } else {
                throw CLIError(
                    .boardNotFound,
                    "no simulated board '\(name)' in \(store.directory.path): "
                        + "saved boards are \(saved.isEmpty ? "none" : saved.joined(separator: ", "))")
            }
            if board.inNordicBootloader {
                throw CLIError(
                    .boardNotFound,
                    "\(name): the board is in its Nordic bootloader (\"DfuTarg\"), left there by an "
                        + "interrupted update; it offers only DFU. Recover it: bitflash flash FILE --simulate \(SimProfile(board: board.profile.board, mcuboot: false))"
                )
            }
            var sim = Simulation(link: try simulation.linkProfile())
            sim.onReport = { _, report, _ in
                if case let .trace(text) = report.worded { Verbose.log.debug("\(name): \(text)") }
            }
            let id = sim.addBoard(board)
            var settings = PartialFlashSettings()
            settings.switchToPairingMode = false
            let mapRun = sim.run(
                MemoryMapReader(family: board.profile.board.family, settings: settings), on: id, deadline: .seconds(60))
            Verbose.dump(mapRun.trace, names: [name])
            let map: BoardMemoryMap
            do { map = try mapRun.outcome.get() } catch {
                throw CLIError(.boardNotFound, "\(name): could not read the memory map: \(describe(error))")
            }
            var slots: [ImageSlotState]?
            if board.offeredServices.contains(SMPGATT.service) {
                let stateRun = sim.run(
                    ImageStateReader(traceBytes: verbose > 1 ? 256 : (verbose > 0 ? 32 : 0)), on: id,
                    deadline: .seconds(60))
                Verbose.dump(stateRun.trace, names: [name])
                do { slots = try stateRun.outcome.get() } catch {
                    throw CLIError(.boardNotFound, "\(name): could not read the image slots: \(describe(error))")
                }
            }
            let shown = Self.shown(name: name, board: board, map: map, slots: slots, saved: isSaved)
            if json {
                StdOut.write(try JSONText.document(shown) + "\n")
            } else {
                StdOut.write(Self.text(shown))
            }
            return .ok
        }
    }

    static func shown(
        name: String, board: SimulatedBoard, map: BoardMemoryMap, slots: [ImageSlotState]?, saved: Bool = true
    ) -> Shown {
        let profile = SimProfile(
            board: board.profile.board, mcuboot: board.offeredServices.contains(SMPGATT.service))
        let services = board.profile.services
        let path =
            services.contains(.smp)
            ? "mcumgr"
            : services.contains(.secureDFU)
                ? "nordic-secure-dfu"
                : services.contains(.legacyDFU) ? "nordic-legacy-dfu" : nil
        return shown(
            name: name, board: board.profile.board, address: board.profile.address, map: map, slots: slots,
            fullUpdatePath: path,
            simulatorState: .init(
                flashIncomplete: board.flashIncomplete, profile: profile.description, saved: saved))
    }

    static func shown(
        name: String, board: Board, address: String, map: BoardMemoryMap, slots: [ImageSlotState]?,
        fullUpdatePath: String? = nil, simulatorState: Shown.SimulatorState?
    ) -> Shown {
        func region(_ r: RegionInfo, _ label: String) -> Shown.Region {
            Shown.Region(
                id: Int(r.id), name: label, start: Hex.address(r.start), end: Hex.address(r.end), hash: r.hash.hexString
            )
        }
        return Shown(
            name: name, board: board.rawValue, address: address,
            mode: map.mode == .pairing ? "pairing" : "application", protocolVersion: Int(map.protocolVersion),
            regions: [region(map.runtime, "runtime"), region(map.program, "program")],
            slots: slots?.map { s in
                Shown.Slot(
                    image: s.image ?? 0, slot: s.slot, version: s.version, hash: s.hash?.hexString,
                    bootable: s.bootable, pending: s.pending, confirmed: s.confirmed, active: s.active,
                    permanent: s.permanent)
            },
            fullUpdatePath: fullUpdatePath,
            simulatorState: simulatorState)
    }

    static func text(_ s: Shown) -> String {
        var out = "\(s.name): \(Board(rawValue: s.board)?.displayName ?? s.board) at \(s.address)\n"
        out += "  mode:           \(s.mode) (partial-flashing protocol version \(s.protocolVersion))\n"
        for r in s.regions {
            out +=
                "  region \(r.id) \(r.name.padding(toLength: 8, withPad: " ", startingAt: 0)) \(r.start)-\(r.end)  hash \(r.hash)\n"
        }
        if let slots = s.slots {
            out += "  MCUboot slots (SMP image state read):\n"
            if slots.isEmpty { out += "    none reported\n" }
            for slot in slots {
                let flags = [
                    ("active", slot.active), ("confirmed", slot.confirmed), ("pending", slot.pending),
                    ("bootable", slot.bootable), ("permanent", slot.permanent)
                ].filter(\.1).map(\.0)
                out +=
                    "    image \(slot.image) slot \(slot.slot): version \(slot.version)  hash \(slot.hash.map { String($0.prefix(16)) + "…" } ?? "-")"
                out += flags.isEmpty ? "\n" : "  \(flags.joined(separator: " "))\n"
            }
        } else if let path = s.fullUpdatePath, path.hasPrefix("nordic") {
            let kind = path == "nordic-secure-dfu" ? "Secure DFU" : "legacy DFU"
            out += "  no McuMgr (SMP) service: full updates go through the board's Nordic bootloader (\(kind))\n"
        } else {
            out += "  no McuMgr (SMP) service: full updates are not possible on this board\n"
        }
        if let state = s.simulatorState {
            out += "  simulator state: \(state.profile), flash \(state.flashIncomplete ? "incomplete" : "complete")\n"
            if !state.saved {
                out +=
                    "  simulator state: not saved yet: the factory board `flash --simulate` starts from "
                    + "(`sim show` lists saved boards only)\n"
            }
        }
        return out
    }
}
