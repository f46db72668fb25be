import ArgumentParser
import Diagnostics
import FirmwareImage
import Flashing
import Foundation
import Laboratory
import LinkModel
import McuMgr
import SimulatedBoard
import SimulatedFlashing
import Synchronization
import SystemFiles

/// The option groups and argument types `flash` shares with `watch`, `demo` and the simulator's
/// commands: the simulated boards and link, the output, and the output shared by boards.
extension FlashMode: ExpressibleByArgument {}
extension SimProfile: ExpressibleByArgument {}
extension PathPreference: ExpressibleByArgument {}
extension FullUpdatePath: ExpressibleByArgument {}

enum UpgradeModeArgument: String, ExpressibleByArgument, CaseIterable {
    case testAndConfirm = "test-and-confirm", confirmOnly = "confirm-only", testOnly = "test-only", uploadOnly =
        "upload-only"
    var mode: McuMgrUpgradeMode {
        switch self {
        case .testAndConfirm: return .testAndConfirm
        case .confirmOnly: return .confirmOnly
        case .testOnly: return .testOnly
        case .uploadOnly: return .uploadOnly
        }
    }
}

/// Options shared by the commands that run simulated boards.
struct SimulationOptions: ParsableArguments {
    /// The kind of simulated board to use: `named` when given, else (for `--simulate` alone or
    /// no `--simulate`) the kind of the board `name` saved in `store`, else the default.
    func profile(_ named: SimProfile?, store: SimStore, name: String) -> SimProfile {
        named ?? store.savedProfile(of: name) ?? .default
    }

    @Option(
        name: .customLong("sim-state"),
        help: ArgumentHelp("Folder of the simulated boards (default: the XDG state folder).", valueName: "DIR"))
    var simState: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Modelled link: linux-default (30 ms), device-requested (15 ms), fast (7.5 ms), or a connection interval "
                + "\(Limits.connectionIntervalMilliseconds.text) in steps of 1.25 ms, such as 11.25ms.",
            valueName: "PROFILE"),
        transform: OptionValues.link)
    var link: String?

    /// The fault-injection options given, by name: the laboratory's (`bitflash-lab flash`).
    var faultsGiven: [String] {
        var names: [String] = []
        if !dropAtWrite.isEmpty { names.append("--sim-drop-at-write") }
        if !resetAt.isEmpty { names.append("--sim-reset-at") }
        if killAt != nil { names.append("--sim-kill-at") }
        return names
    }

    /// The simulation options given on the command line, by name: each needs a simulated board.
    var given: [String] {
        var names: [String] = []
        if simState != nil { names.append("--sim-state") }
        if link != nil { names.append("--link") }
        if !dropAtWrite.isEmpty { names.append("--sim-drop-at-write") }
        if !resetAt.isEmpty { names.append("--sim-reset-at") }
        if killAt != nil { names.append("--sim-kill-at") }
        if !adapters.isEmpty { names.append("--sim-adapter") }
        return names
    }

    @Option(
        name: .customLong("sim-drop-at-write"), parsing: .upToNextOption,
        help: Front.labOnly(
            Limits.writeNumber.help(
                "Fault injection: the simulated link drops at these ATT write numbers (e.g. 60 120 180 240)",
                valueName: "N")),
        transform: Limits.writeNumber.transform)
    var dropAtWrite: [Int] = []

    @Option(
        name: .customLong("sim-reset-at"), parsing: .upToNextOption,
        help: Front.labOnly(
            Limits.modelledSeconds.help(
                "Fault injection: the simulated board resets at these modelled times, in seconds", valueName: "SECONDS")
        ),
        transform: Limits.modelledSeconds.transform)
    var resetAt: [Double] = []

    @Option(
        name: .customLong("sim-kill-at"), parsing: .unconditional,
        help: Front.labOnly(
            Limits.killSeconds.help(
                "Fault injection: bitflash stops at this modelled time, in seconds, as if killed; the board keeps what it got",
                valueName: "SECONDS")),
        transform: Limits.killSeconds.transform)
    var killAt: Double?

    @Option(
        name: .customLong("sim-adapter"), parsing: .singleValue,
        help: ArgumentHelp(
            "A simulated Bluetooth adapter: csr8510 (5 connections), bcm20702 (7), cyw43455 or pi (8), unknown "
                + "(5, assumed), NAME:N, or a number of connections 1…64. Repeat for several adapters "
                + "(default: one unknown adapter).", valueName: "PROFILE"),
        transform: OptionValues.adapter)
    var adapters: [String] = []

    /// The `--sim-adapter` profiles (the option's parse has checked them); one `unknown` adapter by default.
    func adapterProfiles() throws -> [AdapterProfile] {
        guard !adapters.isEmpty else { return [.unknown] }
        do { return try adapters.map { try AdapterProfile(named: $0) } } catch {
            throw CLIError(.usage, "--sim-adapter: \(error)")
        }
    }

    /// The faults the simulated link suffers (none unless asked).
    func faultPlan() -> FaultPlan {
        var plan = FaultPlan(seed: 7)
        plan.disconnectAtWrite = Set(dropAtWrite)
        plan.resetDeviceAt = resetAt.map { .milliseconds(Int64(($0 * 1000).rounded())) }
        return plan
    }

    /// The `--link` profile (the option's parse has checked it).
    func linkProfile() throws -> LinkProfile {
        let name = link ?? "device-requested"
        do { return try LinkProfile(named: name) } catch { throw CLIError(.usage, "--link \(name): \(error)") }
    }
}

/// The simulated boards' folder and how long to wait for another run that holds it: `sim
/// reset`, `sim serve` and `sim bluez` (`flash` keeps its own, to tell whether it was given).
struct StateFolderOptions: ParsableArguments {
    @Option(name: .customLong("sim-state"), help: ArgumentHelp("Folder of the simulated boards.", valueName: "DIR"))
    var simState: String?

    @Option(
        name: .customLong("sim-state-wait"), parsing: .unconditional, help: Self.waitHelp,
        transform: Limits.stateWaitSeconds.transform)
    var stateWait: Double = 30

    /// The help of `--sim-state-wait`, here and on `flash`.
    static let waitHelp = Limits.stateWaitSeconds.help(
        "How long to wait for another bitflash run that uses the same simulated boards' folder", valueName: "SECONDS")
}

/// Options shared by the commands that report flashes.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print one JSON object per line: events, then a result per board.")
    var json = false

    @Flag(name: .short, help: "Show protocol traces (-v), with more bytes (-vv).")
    var verbose: Int

    @Option(
        help: Front.labOnly(
            ArgumentHelp(
                "Record every write, notification, connection event and decision as JSON lines.", valueName: "FILE")))
    var trace: String?

    @Flag(help: "Print plain, timestamped lines even on a terminal: no live bars or class grid.")
    var plain = false

    var mode: OutputMode { OutputMode.choose(json: json, plain: plain) }
}

/// The output, reachable from the simulation's report callback (which runs on this thread).
final class SharedOutput: Sendable {
    private let output: Mutex<FlashOutput>
    /// Redraws the output at the new width when the terminal's window is resized.
    private let resizes = Mutex<ResizeWatch?>(nil)

    init(_ output: sending FlashOutput) {
        self.output = Mutex(output)
        resizes.withLock {
            $0 = TerminalSize.watchResizes { [weak self] in self?.output.withLock { $0.resized() } }
        }
    }
    func event(_ e: FlashEvent) { output.withLock { $0.event(e) } }
    func result(_ r: FlashResult) { output.withLock { $0.result(r) } }
    func classEstimate(_ p: ClassPreview) { output.withLock { $0.classEstimate(p) } }
    func identify(_ ids: [String: BoardIdentity]) { output.withLock { $0.identify(ids) } }
    func finish(_ rs: [FlashResult], identities: [String: BoardIdentity] = [:]) {
        // Nothing is redrawn after the closing lines.
        resizes.withLock {
            $0?.cancel()
            $0 = nil
        }
        output.withLock { $0.finish(rs, identities: identities) }
    }
}

/// `--profile` of the benchmarks: the link profiles to run (default every named one).
struct BenchLinkOptions: ParsableArguments {
    @Option(
        name: .customLong("profile"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "Link profiles (default linux-default, device-requested, fast), or connection intervals such as 11.25ms.",
            valueName: "NAME"),
        transform: OptionValues.link)
    var profiles: [String] = []

    /// The profiles given, or every named one when none was.
    func links() throws -> [LinkProfile] {
        try profiles.isEmpty ? LinkProfile.named : profiles.map { try LinkProfile(named: $0) }
    }
}
