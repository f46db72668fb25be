import ArgumentParser
import DBus
import FakeBlueZ
import Foundation
import Laboratory
import SimulatedBoard

/// `bitflash-lab sim bluez`: simulated boards behind a fake BlueZ (`org.bluez`) on a private
/// D-Bus bus, so that BlueZ clients (bitflash's own BlueZ backend, busctl, bleak) can be
/// tested without Bluetooth hardware. How to run it: the top of Sources/FakeBlueZ/FakeBlueZ.swift.
struct SimBlueZCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluez",
        abstract: "Play simulated boards behind a fake BlueZ (org.bluez) on a private D-Bus bus, for tests.",
        discussion: """
            The fake owns org.bluez on the bus at --bus (default: $DBUS_SYSTEM_BUS_ADDRESS, which must be \
            set: the real system bus is refused) and exports an adapter, the boards as devices once a \
            client starts discovery, and their GATT services while connected, as BlueZ does. Writes \
            reach the simulated boards in real time; device work takes its modelled time times \
            --time-scale. Boards load from and save to the state folder (the one `flash --simulate` and \
            `sim show` use). A line starting `fake org.bluez ready` is printed once the name is owned. \
            Several boards, or one per scenario: --scenario FILE (JSON).
            """)

    @Option(help: ArgumentHelp("The D-Bus bus to serve on (default: $DBUS_SYSTEM_BUS_ADDRESS).", valueName: "ADDRESS"))
    var bus: String?

    @Option(
        help: ArgumentHelp(
            "A JSON scenario with one or more boards (instead of the board options below).", valueName: "FILE"))
    var scenario: String?

    @Option(
        help: ArgumentHelp(
            "The kind of board (default: the saved board's, else microbit-v2-mcuboot).", valueName: "PROFILE"))
    var profile: SimProfile?

    @Option(
        name: .customLong("adapters"), parsing: .unconditional,
        help: Limits.fakeAdapters.help(
            "Adapters to play, hci0, hci1 …; every board is seen through each (default 1)", valueName: "N"),
        transform: Limits.fakeAdapters.transform)
    var adapterCount: Int = 1

    @Option(
        name: .customLong("adapter-max-connections"), parsing: .unconditional,
        help: Limits.connectionsPerAdapter.help(
            "Connections each adapter's controller holds at once; beyond them Connect fails with "
                + "le-connection-refused (default: no limit)", valueName: "N"),
        transform: Limits.connectionsPerAdapter.transform)
    var adapterMaxConnections: Int?

    @Option(help: ArgumentHelp("The advertised name (default: the saved board's).", valueName: "NAME"))
    var name: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The Bluetooth address (default: the saved board's).", valueName: "AA:BB:CC:DD:EE:FF"),
        transform: OptionValues.bluetoothAddress)
    var address: String?

    @Option(help: ArgumentHelp("Put this firmware on the board first (as `sim reset --from`).", valueName: "FILE"))
    var from: String?

    @OptionGroup var stateFolder: StateFolderOptions

    @Flag(help: "Reads, write requests and notifications need a Just Works bond (Pair) first.")
    var requiresPairing = false

    @Flag(help: "Pair fails with org.bluez.Error.AuthenticationFailed.")
    var refusesPairing = false

    @Option(
        help: ArgumentHelp(
            "The first Connect calls fail, in order: in-progress, le-connection-abort-by-local.",
            valueName: "KIND,KIND"))
    var connectFailures: String?

    @Flag(help: "The link comes up but ServicesResolved never becomes true.")
    var servicesNeverResolve = false

    @Option(
        parsing: .unconditional,
        help: Limits.writesBeforeDrop.help("The link drops once, right after this many writes", valueName: "N"),
        transform: Limits.writesBeforeDrop.transform)
    var disconnectAfterWrites: Int?

    @Flag(help: "The board never advertises.")
    var absent = false

    @Flag(help: "BlueZ's GATT cache: GATT objects stay across disconnects (default: removed, as with Cache = no).")
    var gattCache = false

    @Flag(help: "The board advertises only in pairing mode (its program has no Bluetooth); it starts in pairing mode.")
    var pairingModeOnly = false

    @Flag(help: "BlueZ holds a bond the board has forgotten.")
    var staleBond = false

    @Flag(help: "The board starts in pairing mode (as after A+B + reset).")
    var inPairingMode = false

    @Flag(
        help:
            "BlueZ and the board hold a bond from the start (a whitelisted board then advertises in application mode).")
    var bonded = false

    @Flag(help: "AcquireWrite and AcquireNotify answer UnknownMethod, as a BlueZ before 5.46 does.")
    var refusesAcquire = false

    @Option(
        parsing: .unconditional,
        help: Limits.writesBeforeDrop.help(
            "The sockets of AcquireWrite/AcquireNotify close once, after this many writes through them", valueName: "N"),
        transform: Limits.writesBeforeDrop.transform)
    var acquiredSocketsCloseAfter: Int?

    @Flag(
        help:
            "The board's Nordic bootloader advertises at the address + 1 (a stock Nordic build without bonds), not at the board's own."
    )
    var bootloaderAtNextAddress = false

    @Option(
        help: ArgumentHelp(
            "D-Bus level hostility: wrong-types, oversized-values, missing-properties.", valueName: "MODE,MODE"))
    var hostile: String?

    @Option(
        name: .customLong("firmware-hostile"),
        help: ArgumentHelp(
            "The board's firmware misbehaves (as `sim campaign --hostile`): "
                + "\(HostileKind.firmwareKinds.map(\.rawValue).joined(separator: ", ")).", valueName: "KIND,KIND"))
    var firmwareHostile: String?

    @Option(
        parsing: .unconditional,
        help: Limits.seed.help(
            "With --hostile: distort each property and notification by one mode or none, as this seed picks",
            valueName: "SEED"),
        transform: Limits.seed.transform)
    var hostileSeed: UInt64?

    @Option(
        name: .customLong("time-scale"), parsing: .unconditional,
        help: Limits.timeScale.help(
            "Real seconds per modelled second, 0 for at once; without it, 1 or the scenario's", valueName: "S"),
        transform: Limits.timeScale.transform)
    var timeScale: Double?

    @Option(
        name: .customLong("for"), parsing: .unconditional,
        help: Limits.serveSeconds.help(
            "Stop after this many seconds; without it, run until killed", valueName: "SECONDS"),
        transform: Limits.serveSeconds.transform)
    var duration: Double?

    @Flag(name: .short, help: "Print the boards' trace lines.")
    var verbose = false

    private var usesBoardOptions: Bool {
        profile != nil || name != nil || address != nil || from != nil || requiresPairing || refusesPairing
            || connectFailures != nil || servicesNeverResolve || disconnectAfterWrites != nil || absent || staleBond
            || gattCache || pairingModeOnly
            || bonded || inPairingMode || refusesAcquire || acquiredSocketsCloseAfter != nil
            || bootloaderAtNextAddress
            || hostile != nil || hostileSeed != nil || firmwareHostile != nil
    }

    func validate() throws {
        if scenario != nil, usesBoardOptions {
            throw ValidationError("--scenario describes the boards: put the board options into the scenario file")
        }
    }

    func run() async throws {
        try await runCommand {
            let address = try busAddress()
            // A scenario that cannot be used is refused before the state folder is touched.
            let parsed = try scenario.map(Self.readScenario)
            let store = SimStore(option: stateFolder.simState)
            // Held while the fake serves the boards: a flash meanwhile would be lost when they are saved.
            let lock = try StateFolderLock.hold(store.directory, waitSeconds: stateFolder.stateWait)
            defer { withExtendedLifetime(lock) {} }
            let (boards, scenarioScale, adapter) =
                try parsed.map { try scenarioBoards($0.scenario, file: $0.url) } ?? (try [oneBoard(store)], nil, nil)
            do {
                try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
            } catch {
                throw CLIError(.cannotWrite, "cannot create the state folder \(store.directory.path): \(error)")
            }
            var options = FakeBlueZOptions()
            options.timeScale = timeScale ?? scenarioScale ?? 1
            if let adapter { options.adapterAddress = adapter }
            if adapterCount > 1 || adapterMaxConnections != nil {
                options.adapters = FakeAdapter.numbered(adapterCount, maxConnections: adapterMaxConnections)
                if let adapter { options.adapters[0].address = adapter }
            }
            let verbose = self.verbose
            options.onNote = { line in if verbose { StdOut.write("  \(line)\n") } }
            // A FakeBlueZError exits 69: to its clients, no board is there.
            let fake = try await FakeBlueZ.start(bus: .address(address), boards: boards, options: options)
            for (board, path) in zip(boards, fake.devicePaths) {
                let state = board.stateFile.map { ($0.lastPathComponent as NSString).deletingPathExtension } ?? "-"
                StdOut.write(
                    "board \(state): \(board.address) \"\(board.name ?? board.board.profile.name)\" "
                        + "\(SimProfile(board: board.board.profile.board, mcuboot: board.board.profile.services.contains(.smp))) "
                        + "at \(path)\(Self.describe(board.behaviour))\n")
            }
            StdOut.write(
                "fake org.bluez ready on "
                    + FakeBlueZOptions.adapters(of: options).map { "\($0.name) (\($0.address))" }.joined(
                        separator: ", ")
                    + ": "
                    + "\(boards.count) board\(boards.count == 1 ? "" : "s"), state \(store.directory.path)\n")
            await SimServeCommand.waitForStop(seconds: duration)
            let traffic = fake.traffic
            let peaks = fake.peakConnections
            _ = await fake.stop()
            for a in FakeBlueZOptions.adapters(of: options) {
                StdOut.write("adapter \(a.name): at most \(peaks[a.name] ?? 0) connected at once\n")
            }
            for (board, counts) in zip(boards, traffic) { StdOut.write("board \(board.address) \(counts)\n") }
            StdOut.write("stopped; boards saved\n")
            return .ok
        }
    }

    private func busAddress() throws -> String {
        let address = bus ?? ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? ""
        guard !address.isEmpty else {
            throw CLIError(
                .usage,
                "no bus to serve on: start a private dbus-daemon and pass its address with --bus "
                    + "or DBUS_SYSTEM_BUS_ADDRESS (the fake never serves on the real system bus)")
        }
        guard !address.contains(DBusBusAddress.defaultSystemAddress.dropFirst("unix:path=".count)),
            !address.contains("/run/dbus/system_bus_socket")
        else {
            throw CLIError(.usage, "\(address) is the real system bus: the fake only serves on a private bus")
        }
        return address
    }

    /// The one board of the command-line options.
    private func oneBoard(_ store: SimStore) throws -> FakeBoard {
        var behaviour = FakeBoardBehaviour()
        behaviour.requiresPairing = requiresPairing
        behaviour.refusesPairing = refusesPairing
        behaviour.servicesNeverResolve = servicesNeverResolve
        behaviour.disconnectAfterWrites = disconnectAfterWrites
        behaviour.absent = absent
        behaviour.staleBond = staleBond
        behaviour.bonded = bonded
        behaviour.startsInPairingMode = inPairingMode
        behaviour.refusesAcquire = refusesAcquire
        behaviour.acquiredSocketsCloseAfter = acquiredSocketsCloseAfter
        behaviour.gattCache = gattCache
        behaviour.pairingModeOnly = pairingModeOnly
        behaviour.bootloaderAtNextAddress = bootloaderAtNextAddress
        behaviour.connectFailures = try Self.list(connectFailures, "--connect-failures")
        behaviour.hostile = Set(try Self.list(hostile, "--hostile"))
        behaviour.hostileSeed = hostileSeed
        if hostileSeed != nil, behaviour.hostile.isEmpty {
            throw CLIError(
                .usage,
                "--hostile-seed picks among the --hostile modes: give them too, e.g. --hostile wrong-types,missing-properties"
            )
        }
        let state = SimStore.names(count: 1)[0]
        var board = try Self.board(store: store, state: state, index: 1, profile: profile, from: from)
        for kind: HostileKind in try Self.list(firmwareHostile, "--firmware-hostile") {
            guard !kind.isLinkFault else {
                throw CLIError(
                    .usage,
                    "--firmware-hostile: \(kind.rawValue) is a fault of the link, not of the firmware (sim campaign --hostile)"
                )
            }
            board.makeHostile(kind)
        }
        return FakeBoard(
            board: board, name: name ?? Self.advertisedName(board), address: address, behaviour: behaviour,
            stateFile: store.url(of: state))
    }

    /// The scenario file at `path`, checked (65 when it cannot be used).
    private static func readScenario(_ path: String) throws -> (scenario: FakeBlueZScenario, url: URL) {
        let url = URL(fileURLWithPath: path)
        let scenario: FakeBlueZScenario
        do { scenario = try FakeBlueZScenario.load(from: url) } catch { throw CLIError(.badFirmware, "\(error)") }
        if let scale = scenario.timeScale, !Limits.timeScale.range.contains(scale) {
            throw CLIError(
                .badFirmware,
                "\(path): timeScale \(scale) is outside what --time-scale allows (\(Limits.timeScale.text))")
        }
        return (scenario, url)
    }

    /// The boards of a scenario, loaded from (or made for) the state folder.
    private func scenarioBoards(_ scenario: FakeBlueZScenario, file url: URL) throws -> ([FakeBoard], Double?, String?)
    {
        let path = url.path
        let store = SimStore(option: stateFolder.simState)
        let names = SimStore.names(count: scenario.boards.count)
        let base = url.deletingLastPathComponent()
        var boards: [FakeBoard] = []
        for (i, entry) in scenario.boards.enumerated() {
            let profile = try entry.profile.map { text -> SimProfile in
                guard let p = SimProfile(argument: text) else {
                    throw CLIError(
                        .usage,
                        "\(path): board \(i + 1) has unknown profile '\(text)'; known: "
                            + SimProfile.allValueStrings.joined(separator: ", "))
                }
                return p
            }
            let state = entry.state ?? names[i]
            let from = entry.from.map { $0.hasPrefix("/") ? $0 : base.appendingPathComponent($0).path }
            let board = try Self.board(store: store, state: state, index: i + 1, profile: profile, from: from)
            boards.append(
                FakeBoard(
                    board: board, name: entry.name ?? Self.advertisedName(board), address: entry.address,
                    behaviour: entry.behaviour,
                    stateFile: store.url(of: state)))
        }
        return (boards, scenario.timeScale, scenario.adapterAddress)
    }

    /// The name a board advertises when none is given: its own if it is a runtime's name, else
    /// the runtime's with the board's (state) name as the friendly name, as pairing mode has it
    /// (`BBC micro:bit [sim]`), so that `bitflash scan` lists it as the board it is.
    static func advertisedName(_ board: SimulatedBoard) -> String {
        let name = board.profile.name
        if name.hasPrefix("BBC micro:bit") || name.hasPrefix("Calliope mini") { return name }
        let runtime = board.profile.board.rawValue.hasPrefix("calliope") ? "Calliope mini" : "BBC micro:bit"
        return "\(runtime) [\(name)]"
    }

    /// A board holding `from`; else the saved board `state` (which must be of `profile` when
    /// one is given); else a fresh board of `profile` holding the sample program.
    static func board(store: SimStore, state: String, index: Int, profile: SimProfile?, from: String?) throws
        -> SimulatedBoard
    {
        try store.requireOwnFile(state)
        if let from {
            let profile = profile ?? .default
            return try profile.makeBoard(
                holding: try profile.image(fromFile: from), name: state, address: SimStore.address(index))
        }
        if profile == nil, let saved = try store.load(state) { return saved }
        return try store.loadOrCreate(state, profile: profile ?? .default, index: index)
    }

    private static func list<T: RawRepresentable>(_ text: String?, _ option: String) throws -> [T]
    where T.RawValue == String {
        guard let text else { return [] }
        return try text.split(separator: ",").map { part in
            let word = part.trimmingCharacters(in: .whitespaces)
            guard let value = T(rawValue: word) else { throw CLIError(.usage, "\(option): unknown value '\(word)'") }
            return value
        }
    }

    private static func describe(_ b: FakeBoardBehaviour) -> String {
        var parts: [String] = []
        if b.absent { parts.append("absent") }
        if b.requiresPairing { parts.append("requires pairing") }
        if b.refusesPairing { parts.append("refuses pairing") }
        if b.staleBond { parts.append("stale bond") }
        if b.bonded { parts.append("bonded") }
        if b.startsInPairingMode { parts.append("starts in pairing mode") }
        if b.refusesAcquire { parts.append("no AcquireWrite/AcquireNotify") }
        if let n = b.acquiredSocketsCloseAfter { parts.append("acquired sockets close after \(n) writes") }
        if b.gattCache { parts.append("GATT cache") }
        if b.pairingModeOnly { parts.append("pairing mode only") }
        if b.bootloaderAtNextAddress { parts.append("bootloader at the next address") }
        if !b.connectFailures.isEmpty {
            parts.append("connect fails: " + b.connectFailures.map(\.rawValue).joined(separator: ","))
        }
        if b.servicesNeverResolve { parts.append("services never resolve") }
        if let n = b.disconnectAfterWrites { parts.append("link drops after \(n) writes") }
        if !b.hostile.isEmpty {
            parts.append(
                "hostile: " + b.hostile.map(\.rawValue).sorted().joined(separator: ",")
                    + (b.hostileSeed.map { ", seed \($0)" } ?? ""))
        }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
    }
}
