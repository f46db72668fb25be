import ArgumentParser
import BlueZTransport
import Foundation

/// `bitflash forget ADDR|NAME`: removes a board's bond (and BlueZ's cached copy of its GATT
/// table) so that the next connection pairs afresh. The fix for a board that forgot this
/// computer: after a reflash or a reset into pairing mode, a micro:bit or Calliope mini drops
/// its bonds while BlueZ keeps its half, and connects, reads or notifications then fail.
struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Remove a board's Bluetooth bond, so that the next flash pairs afresh.",
        discussion: """
            Use it when bitflash says the board forgot this computer. Then put the board in pairing \
            mode (hold A+B, press reset) and flash again. Exit codes: 0 removed, 69 BlueZ knows no \
            such board, 75 Bluetooth not available.
            """)

    @Argument(help: ArgumentHelp("The board's address or name, as `bitflash scan` shows it.", valueName: "ADDR|NAME"))
    var device: String

    @Option(help: ArgumentHelp("The Bluetooth adapter (default: the first one switched on).", valueName: "hciN"))
    var adapter: String?

    func run() async throws {
        try await runCommand {
            let bus = try await BlueZBus.open()
            defer { bus.close() }
            let removed = try await BlueZScanner(bus: bus, adapter: adapter).forget(DeviceQuery(device))
            StdOut.write(
                "forgot \(removed.label)\(removed.paired ? " and its bond" : ""); put the board in pairing mode "
                    + "(hold A+B, press reset) before the next flash\n")
            return .ok
        }
    }
}
