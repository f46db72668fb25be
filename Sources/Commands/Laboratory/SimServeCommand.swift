import ArgumentParser
import Diagnostics
import Dispatch
import Foundation
import Laboratory
import SimulatedUDP
import UDPTransport
import SimulatedBoard

/// `bitflash-lab sim serve --udp HOST:PORT`: a simulated MCUboot board serving McuMgr SMP over UDP,
/// so that any SMP client (bitflash itself, smpmgr, mcumgr-toolkit) can update it.
/// `bitflash-lab sim serve --adapter hci1`: a simulated board in the peripheral role on the real
/// BlueZ, so that a central on another adapter can scan for it and flash it
/// (`SimServeCommand+BlueZ.swift`).
struct SimServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a simulated board over UDP (McuMgr SMP) or as a Bluetooth peripheral through BlueZ.",
        discussion: """
            With --adapter, the board registers its GATT services (partial flashing, and SMP for the \
            -mcuboot profiles) with bluetoothd on that adapter and advertises; a central on another adapter \
            (or computer) flashes it with `bitflash flash --device`. A board reset disconnects the central and \
            the board advertises again once it has booted. With --udp: the board is loaded from the state folder (the same one `flash --simulate` uses) and saved \
            back when the server stops (after --for, or on SIGINT/SIGTERM). It answers SMP requests \
            over UDP as a Zephyr smp_svr build with MCUboot would: image state, upload, test, confirm, \
            erase, echo, reset (with the MCUboot swap), mcumgr parameters. Device work takes its \
            modelled time times --time-scale. Port 0 takes any free port; the port bound is printed.
            """)

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Where to listen (use a loopback address unless you mean otherwise; port 0: any free port).",
            valueName: "HOST:PORT"),
        transform: OptionValues.listenEndpoint)
    var udp: String?

    @Option(help: ArgumentHelp("Play the board as a Bluetooth peripheral on this BlueZ adapter.", valueName: "hciN"))
    var adapter: String?

    @Option(
        name: .customLong("profile"),
        help: ArgumentHelp(
            "The kind of board (default: the saved board's, else microbit-v2-mcuboot; with --udp an -mcuboot profile).",
            valueName: "PROFILE"))
    var profileOption: SimProfile?

    @Option(
        help: ArgumentHelp(
            "With --adapter: put this firmware on the board first (as `sim reset --from`).", valueName: "FILE"))
    var from: String?

    @Option(help: ArgumentHelp("With --adapter: the advertised name (default: the board's).", valueName: "NAME"))
    var name: String?

    var profile: SimProfile { profileOption ?? .default }

    @OptionGroup var stateFolder: StateFolderOptions

    @Option(
        name: .customLong("for"), parsing: .unconditional,
        help: Limits.serveSeconds.help(
            "Stop after this many seconds; without it, run until killed", valueName: "SECONDS"),
        transform: Limits.serveSeconds.transform)
    var duration: Double?

    @Option(
        name: .customLong("time-scale"), parsing: .unconditional,
        help: Limits.timeScale.help("Real seconds per modelled second of device work (0: at once)", valueName: "S"),
        transform: Limits.timeScale.transform)
    var timeScale: Double = 1

    @Flag(
        name: .customLong("no-acquire"),
        help:
            "With --adapter: offer BlueZ no AcquireWrite/AcquireNotify (every write a WriteValue call, every notification a signal)."
    )
    var noAcquire = false

    @Flag(name: .short, help: "Print the board's trace lines.")
    var verbose = false

    func validate() throws {
        guard (udp == nil) != (adapter == nil) else {
            throw ValidationError("give either --udp HOST:PORT or --adapter hciN")
        }
        if let adapter, adapter.isEmpty || adapter.contains("/") {
            throw ValidationError("--adapter takes an adapter name such as hci1")
        }
        guard adapter == nil else { return }
        if from != nil || name != nil || noAcquire {
            throw ValidationError("--from, --name and --no-acquire go with --adapter")
        }
        guard profile.mcuboot else {
            throw ValidationError("--profile \(profile) has no SMP service: use \(profile)-mcuboot")
        }
    }

    func run() async throws {
        if let adapter { return try await runPeripheral(adapter: adapter) }
        try await runCommand {
            let endpoint: UDPEndpoint
            do { endpoint = try UDPEndpoint(parsing: udp ?? "") } catch { throw CLIError(.usage, "--udp \(error)") }
            let store = SimStore(option: stateFolder.simState)
            // Held while the board serves: a flash meanwhile would be lost when the board is saved.
            let lock = try StateFolderLock.hold(store.directory, waitSeconds: stateFolder.stateWait)
            defer { withExtendedLifetime(lock) {} }
            let name = SimStore.names(count: 1)[0]
            let board = try store.loadOrCreate(name, profile: profile, index: 1)
            let verbose = self.verbose
            let server: SimulatedUDPServer
            do {
                server = try await SimulatedUDPServer.start(
                    board: board, on: endpoint, timeScale: timeScale,
                    onNote: { if verbose { StdOut.write("  \($0)\n") } })
            } catch {
                // Where to listen must be one of this computer's addresses: a name that does not
                // resolve is a bad command line here, not a board out of reach.
                if case let SMPUDPError.unknownHost(host, detail) = error {
                    throw CLIError(
                        .usage,
                        "cannot listen on \(endpoint): the host name '\(host)' does not resolve (\(detail)); "
                            + "use one of this computer's addresses, such as 127.0.0.1")
                }
                throw CLIError(ExitStatus.of(error), "\(error)")
            }
            StdOut.write(
                "serving SMP over UDP on \(server.endpoint) (board \(name), \(profile), state \(store.directory.path))\n"
            )
            await Self.waitForStop(seconds: duration)
            let final = await server.stop()
            try store.save(final, as: name)
            let c = server.counters
            StdOut.write(
                "stopped: \(c.datagramsIn) datagrams in (\(c.dropped) dropped while resetting), \(c.datagramsOut) out, "
                    + "\(c.resets) reset\(c.resets == 1 ? "" : "s"); board saved\n")
            return .ok
        }
    }

    /// Returns after `seconds`, or at SIGINT/SIGTERM.
    static func waitForStop(seconds: Double?) async {
        let (stream, sink) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { sink.yield() }
            source.resume()
            sources.append(source)
        }
        let timer = seconds.map { s in
            Task {
                try? await Task.sleep(for: .seconds(s))
                sink.yield()
            }
        }
        for await _ in stream { break }
        timer?.cancel()
        for source in sources { source.cancel() }
    }
}
