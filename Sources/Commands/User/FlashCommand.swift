import ArgumentParser
import Diagnostics
import FirmwareImage
import Flasher
import Flashing
import Foundation
import Laboratory
import LinkModel
import McuMgr
import SimulatedBoard
import SimulatedFlashing
import Synchronization

/// `bitflash flash FILE`: the main job.
struct FlashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flash",
        abstract: "Flash a firmware file: only the changed program when possible, a full update otherwise.",
        discussion: """
            With --device (repeatable) or --all-in-range, real boards are flashed over BlueZ, in real \
            seconds; with neither, the board this computer flashed last, when it is in range (else the \
            boards in range are listed, exit 64). With --simulate, a simulated board whose flash persists \
            in a state folder is flashed on a modelled Bluetooth link; times are modelled seconds. The \
            path taken and why is printed before and after. Exit codes: 0 flashed and read back (or up to date), 2 written but not read \
            back (the result says why), 3 flashed after falling back from \
            partial flashing to a full update, 64 bad command line, 65 bad firmware file, 66 unreadable \
            file, 69 board not found, 73 a file could not be written, 74 flashing failed, 75 Bluetooth not \
            available, 76 the board's services never resolved, 77 pairing refused.
            """)

    @Argument(
        help:
            "The firmware file: Intel HEX, Universal Hex, UF2, MCUboot image or DFU .zip (watch: a file or folder to watch)."
    )
    var file: String

    @Option(
        name: .customLong("device"),
        help: ArgumentHelp("A real board's address or name (repeat for a class set).", valueName: "ADDR|NAME"))
    var devices: [String] = []

    @Flag(name: .customLong("all-in-range"), help: "Flash every board in Bluetooth range (a class set), in parallel.")
    var allInRange = false

    @OptionGroup var bluetooth: BluetoothOptions

    @Flag(
        name: .customLong("simulate"),
        help: ArgumentHelp(
            SimulateOption.help(
                "Flash a simulated board (of the kind already in the state folder, else microbit-v2-mcuboot)."),
            valueName: "PROFILE"))
    var simulateGiven = false

    /// The kind `--simulate` names, or (after `validate`) a further word `watch` watches.
    @Argument(help: .hidden)
    var secondWord: String?

    /// The kind of simulated board `--simulate` names; nil when it names none.
    var namedProfile: SimProfile? { simulateGiven ? secondWord.flatMap { SimProfile(argument: $0) } : nil }

    /// A simulated board's kind with `--simulate` (the default when it names none), else nil.
    var simulate: SimProfile? { simulateGiven ? namedProfile ?? .default : nil }

    /// Words besides the file that name no profile (`watch` watches them; `flash` refuses them).
    var otherWords: [String] { namedProfile == nil ? secondWord.map { [$0] } ?? [] : [] }

    @Option(
        parsing: .unconditional,
        help: Limits.boards.help(
            "How many simulated boards to flash at once (a class set sharing one adapter)", valueName: "N"),
        transform: Limits.boards.transform)
    var boards: Int = 1

    @Option(
        name: .customLong("sim-state-wait"), parsing: .unconditional, help: StateFolderOptions.waitHelp,
        transform: Limits.stateWaitSeconds.transform)
    var stateWait: Double?

    @Option(help: ArgumentHelp("Use the file's section for this board (default: the board's own).", valueName: "BOARD"))
    var board: String?

    @Option(help: "auto: partial when possible, full otherwise; partial or full: force a path.")
    var mode: FlashMode = .auto

    @Option(
        help: ArgumentHelp(
            "In auto mode, take this kind of path whenever it is possible instead of the fastest by estimate.",
            valueName: "partial|full"))
    var prefer: PathPreference?

    @Flag(
        name: .customLong("dry-run"),
        help: "Read the memory map, decide and print the plan with its estimates; write nothing.")
    var dryRun = false
    @Option(
        name: .customLong("full-path"),
        help: ArgumentHelp(
            "The full-update path: mcumgr (SMP, MCUboot boards) or nordic (the stock Nordic bootloader). Default: the one the board has.",
            valueName: "PATH"))
    var fullPath: FullUpdatePath?

    @Option(
        name: .customLong("dfu-image"),
        help: ArgumentHelp("The MCUboot image a full update uploads (default: built from the file).", valueName: "FILE")
    )
    var dfuImage: String?

    @Option(
        name: .customLong("upgrade-mode"),
        help: "What follows a full upload: test-and-confirm, confirm-only, test-only, upload-only.")
    var upgradeMode: UpgradeModeArgument = .testAndConfirm

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Full McuMgr update over SMP/UDP to this server (Zephyr's UDP transport, or `bitflash-lab sim serve --udp`).",
            valueName: "HOST:PORT"),
        transform: OptionValues.serverEndpoint)
    var udp: String?

    @Flag(
        name: .customLong("retry-failed"),
        help:
            "Flash again only the boards that failed in the last run of several boards with this file (real boards; with --simulate, simulated ones)."
    )
    var retryFailed = false

    @Flag(
        name: .customLong("no-resume"),
        help: "Start a partial flash from the beginning even when an earlier run left it unfinished.")
    var noResume = false

    @Flag(
        help: ArgumentHelp(
            "Flash a file whose UF2 family ID, MCUboot header size or MCUboot address says it is for another board.",
            discussion:
                "Never overrides the checks that keep writes inside the board's application region or slot: data the chip has no memory for, a SoftDevice that reaches into the application region, an MCUboot image larger than the slot or fixed to another address, DFU package parts besides the application."
        ))
    var force = false

    @OptionGroup var simulation: SimulationOptions
    @OptionGroup var output: OutputOptions

    mutating func validate() throws {
        // `--simulate [PROFILE]`: the profile may stand before or after the file.
        let (profile, rest) = SimulateOption.split(
            [file] + (secondWord.map { [$0] } ?? []), simulate: simulateGiven, keeping: 1)
        if let profile {
            file = rest[0]
            secondWord = profile.description
        }
        try validateUDP()
        try validateRetry()
        if !devices.isEmpty || allInRange, simulate != nil {
            throw ValidationError("use either --device/--all-in-range or --simulate, not both")
        }
        if allInRange, !devices.isEmpty { throw ValidationError("use either --device or --all-in-range, not both") }
        // One board named twice would get two sessions at once and count as two boards.
        var named: Set<String> = []
        for device in devices where !named.insert(device.lowercased()).inserted {
            throw ValidationError("--device \(device) is given twice: each board is flashed once; leave out the repeat")
        }
        if boards > 1, !devices.isEmpty || allInRange {
            throw ValidationError("--boards counts simulated boards: repeat --device instead")
        }
        if boards > 1, simulate == nil, devices.isEmpty {
            throw ValidationError("--boards counts simulated boards: add --simulate")
        }
        try validateTarget()
        if let prefer, mode != .auto {
            throw ValidationError(
                "--prefer \(prefer.rawValue) chooses among paths in auto mode, but --mode \(mode.rawValue) already forces one: drop one of them"
            )
        }
        if dryRun, udp != nil {
            throw ValidationError("--dry-run plans a Bluetooth flash; it does not work with --udp")
        }
    }

    /// Options for simulated boards need --simulate, options for real boards need a real one:
    /// an option that would do nothing is refused by name, never silently ignored.
    func validateTarget() throws {
        if Front.current == .user, let name = simulation.faultsGiven.first ?? (output.trace != nil ? "--trace" : nil) {
            throw ValidationError(
                "\(name) belongs to the laboratory: run the same command as `bitflash-lab flash …`")
        }
        var simulatedOnly = simulation.given
        if stateWait != nil { simulatedOnly.append("--sim-state-wait") }
        if simulate == nil, let name = simulatedOnly.first {
            let target = udp != nil ? "an SMP server (--udp)" : "real boards"
            throw ValidationError(
                "\(name) is for simulated boards (--simulate); it does nothing when flashing \(target): leave it out")
        }
        if simulate != nil, let name = bluetooth.realOnlyGiven.first {
            throw ValidationError(
                "\(name) is for real boards; simulated boards (--simulate) use --sim-adapter and --link: leave it out")
        }
        if simulate != nil, let n = bluetooth.maxConnections { try Self.refuseMoreConnections(n, than: simulation) }
    }

    /// A simulated adapter holds no more connections than its profile: `--max-connections`
    /// above that would be capped without a word, so it is refused, naming the adapter's limit.
    static func refuseMoreConnections(_ n: Int, than simulation: SimulationOptions) throws {
        let profiles = (try? simulation.adapterProfiles()) ?? []
        for (i, adapter) in profiles.enumerated() where adapter.maxConnections < n {
            throw ValidationError(
                "--max-connections \(n): the simulated adapter hci\(i) (\(adapter.name)) holds at most "
                    + "\(adapter.maxConnections) connections at once; ask for \(adapter.maxConnections) or fewer, "
                    + "or simulate an adapter that holds \(n) (--sim-adapter \(n))")
        }
    }

    func run() async throws {
        try await runCommand {
            if let word = otherWords.first {
                throw CLIError(
                    .usage,
                    "unexpected argument '\(word)': flash takes one file"
                        + (SimProfile(argument: word) != nil ? " (a simulated board's kind follows --simulate)" : ""))
            }
            if let udp { return try await runOverUDP(udp) }
            switch try await flashBoards() {
            case let .planned(status): return status
            case let .flashed(results): return finishFlash(results)
            }
        }
    }

    func makePlan(_ firmware: Firmware, profile: SimProfile) throws -> FlashPlan {
        try makePlan(firmware, board: profile.board, described: "simulated \(profile.board.displayName)")
    }

    /// The policy's settings for this command: `--board`, `--dfu-image` (read here, so that
    /// its errors name its file), `--force`, and the file named as the user gave it.
    func planSettings() throws -> PlanSettings {
        var settings = PlanSettings()
        if let name = board {
            guard let b = Board(userName: name) else { throw CLIError(.usage, "unknown board '\(name)'") }
            settings.board = b
        }
        settings.dfuImage = try dfuImage.map { try DFUImage.from(FirmwareFileLoading.loadForFlash($0), label: $0) }
        settings.force = force
        settings.fileLabel = file
        return settings
    }

    /// The library's flasher over `backend` with what the options chose: the policy's settings
    /// (`planSettings`), the session's options, `--no-resume`.
    func flasher(_ backend: Flasher.Backend) throws -> Flasher {
        Flasher(backend, plan: try planSettings(), options: options(), startOver: noResume)
    }

    /// The plan for `firmware` on `detected`, by the library's policy (`Flasher.plan`), with a
    /// warning on stderr for each problem `--force` lets through.
    func makePlan(_ firmware: Firmware, board detected: Board, described: String) throws -> FlashPlan {
        try flasher(.simulated(resume: nil)).plan(firmware, for: detected, described: described) {
            StdErr.write("bitflash: warning: \($0)\n")
        }
    }

    /// Prints each board's dry-run plan; the same for a simulated and a real board.
    func printPlans(_ outcomes: [(board: String, outcome: Result<SessionOutcome, any Error>)]) throws -> ExitStatus {
        var failed = false
        for (board, outcome) in outcomes {
            let plan = DryRunPlan(board: board, outcome: outcome)
            failed = failed || plan.error != nil
            StdOut.write(output.json ? try PlanText.json(plan) + "\n" : PlanText.dryRun(plan, file: file))
        }
        for (board, outcome) in outcomes {
            guard case let .failure(error) = outcome else { continue }
            StdErr.write("bitflash: error: \(outcomes.count == 1 ? "" : "\(board): ")\(describe(error))\n")
        }
        return failed ? .flashFailed : .ok
    }

    func options() -> FlashOptions {
        var o = Self.options(mode: mode, upgradeMode: upgradeMode, verbosity: output.verbose)
        o.prefer = prefer
        o.dryRun = dryRun
        o.fullPath = fullPath
        return o
    }

    /// The options of a flash (also what `sim replay` rebuilds from a trace's header).
    static func options(mode: FlashMode, upgradeMode: UpgradeModeArgument, verbosity: Int) -> FlashOptions {
        var o = FlashOptions(mode: mode)
        o.mcumgr.mode = upgradeMode.mode
        o.mcumgr.estimatedSwapTime = .seconds(2)
        o.mcumgr.traceBytes = verbosity > 1 ? 64 : (verbosity > 0 ? 16 : 0)
        o.optionNames = .commandLine
        return o
    }
}
