// bitflash-serve: the class page (`bitflash serve` runs it): a local web page to flash a class set.
import ArgumentParser
import BlueZFlashing
import ClassPage
import Flasher
import Flashing
import Foundation
import Laboratory
import LinkModel

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bitflash serve",
        abstract: "Flash a class set from a local web page.",
        discussion: """
            Prints the page's URL, with a secret token made for this start: every request must carry it. \
            The server answers only requests whose Host is its own address and whose Origin, when the \
            browser sends one, is its own page (no other site can drive it, even through DNS rebinding). \
            Files are read in memory, at most as large as the largest file a board can take. Stop it with Ctrl-C.
            """)

    @Option(
        help: ArgumentHelp(
            "The address to listen on. Another than 127.0.0.1 lets other computers reach the page (a warning says so).",
            valueName: "ADDRESS"))
    var address = "127.0.0.1"

    @Option(help: ArgumentHelp("The port to listen on (0: a free port, printed in the URL).", valueName: "PORT"))
    var port = 8000

    @Option(
        help: ArgumentHelp(
            "A simulated class instead of real boards, of this kind (given alone: microbit-v2-mcuboot).",
            valueName: "PROFILE"))
    var simulate: String?

    @Option(help: ArgumentHelp("How many simulated boards (1 to 64).", valueName: "N"))
    var boards = 8

    @Option(
        help: ArgumentHelp("Simulated boards: modelled seconds played per real second (1: real speed).", valueName: "X")
    )
    var speed = 1.0

    @Option(
        name: .customLong("sim-bluetooth-off"),
        help: ArgumentHelp(
            "Simulated boards: how many of them, the last ones, run a program that keeps Bluetooth off, so their flash fails (to see a failure and its retry).",
            valueName: "N"))
    var bluetoothOff = 0

    mutating func validate() throws {
        guard (0...boards).contains(bluetoothOff) else {
            throw ValidationError("--sim-bluetooth-off \(bluetoothOff): give 0 to --boards (\(boards))")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port): give 0 to 65535") }
        guard (1...64).contains(boards) else { throw ValidationError("--boards \(boards): give 1 to 64") }
        guard speed > 0, speed <= 1000 else {
            throw ValidationError("--speed \(speed): give more than 0 and at most 1000")
        }
    }

    func run() async throws { try await serve() }

    /// Serves the page until the process is stopped.
    func serve() async throws {
        let room: ClassRoom
        if simulate != nil {
            let name = simulate ?? SimProfile.default.description
            guard let profile = SimProfile(argument: name) else {
                throw ValidationError(
                    "--simulate \(name): give one of \(SimProfile.allValueStrings.joined(separator: ", "))")
            }
            let simulated = try SimulatedClass(
                profile: profile, count: boards, speed: speed, bluetoothOff: bluetoothOff)
            room = ClassRoom(
                flasher: Flasher(.simulated(resume: nil), options: Self.options), boards: .simulated(simulated))
        } else {
            room = ClassRoom(flasher: Flasher(.bluez(BlueZFlashSettings()), options: Self.options), boards: .bluez)
            Task { await room.scan() }
        }
        if !RequestGuard.isLoopback(address) {
            FileHandle.standardError.write(
                Data(
                    ("bitflash: warning: listening on \(address): other computers on the network can reach the page; "
                        + "anyone with its URL and token can flash your boards\n").utf8))
        }
        let token = RequestGuard.makeToken()
        let shown = address.contains(":") ? "[\(address)]" : address
        try await PageServer.run(room, address: address, port: port, token: token) { _, port in
            FileHandle.standardOutput.write(
                Data(
                    ("bitflash serve: open http://\(shown):\(port)/?token=\(token)\n"
                        + "(the token is new at each start; Ctrl-C stops the server)\n").utf8))
        }
    }

    /// The options `bitflash flash` uses by default.
    static var options: FlashOptions {
        var options = FlashOptions()
        options.mcumgr.estimatedSwapTime = .seconds(2)
        return options
    }
}

/// `--simulate` given alone (last, or before another option) names the default kind, as
/// `bitflash flash --simulate` does.
func withSimulateDefault(_ arguments: [String]) -> [String] {
    var out: [String] = []
    for (i, argument) in arguments.enumerated() {
        out.append(argument)
        if argument == "--simulate", i + 1 == arguments.count || arguments[i + 1].hasPrefix("-") {
            out.append(SimProfile.default.description)
        }
    }
    return out
}

do {
    var command = try Serve.parseAsRoot(withSimulateDefault(Array(CommandLine.arguments.dropFirst())))
    if let serve = command as? Serve { try await serve.serve() } else { try command.run() }
} catch {
    Serve.exit(withError: error)
}
