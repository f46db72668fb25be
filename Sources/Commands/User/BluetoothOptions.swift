import ArgumentParser
import BlueZFlashing
import Flashing
import Foundation

/// Options of the commands that talk to real boards through BlueZ. Each is optional: what the
/// user leaves out keeps the library's default (`BlueZFlashSettings`), which the help shows.
struct BluetoothOptions: ParsableArguments {
    @Option(
        name: .customLong("adapter"), parsing: .singleValue,
        help: ArgumentHelp(
            "The Bluetooth adapter; repeat to flash through several, or `all` for every adapter switched on "
                + "(default: the first one switched on).", valueName: "hciN|all"))
    var adapters: [String] = []

    @Option(
        name: .customLong("max-connections"), parsing: .unconditional,
        help: Limits.connectionsPerAdapter.help(
            "Boards connected at once per adapter; the others wait and start as boards finish (default "
                + "\(Self.defaults.maxConnectionsPerAdapter), lowered on its own when a controller refuses more)",
            valueName: "N"),
        transform: Limits.connectionsPerAdapter.transform)
    var maxConnections: Int?

    /// The one adapter of a command that uses one (`scan`): the first given.
    var adapter: String? { adapters.first.flatMap { $0 == "all" ? nil : $0 } }

    @Option(
        name: .customLong("scan-timeout"), parsing: .unconditional,
        help: Limits.bluetoothSeconds.help(
            "How long to look for a board, in seconds (default \(Self.defaults.scanTimeout.seconds.formatted()))",
            valueName: "S"),
        transform: Limits.bluetoothSeconds.transform)
    var scanTimeout: Double?

    @Option(
        name: .customLong("connect-timeout"), parsing: .unconditional,
        help: Limits.bluetoothSeconds.help(
            "How long one connect (and the wait for the board's services) may take, in seconds "
                + "(default \(Self.defaults.connectTimeout.seconds.formatted()))", valueName: "S"),
        transform: Limits.bluetoothSeconds.transform)
    var connectTimeout: Double?

    @Flag(name: .customLong("no-pair"), help: "Never pair: fail on a board that asks for a bond.")
    var noPair = false

    static let defaults = BlueZFlashSettings()

    /// The options given that only a real board's flash uses, by name.
    var realOnlyGiven: [String] {
        var names: [String] = []
        if !adapters.isEmpty { names.append("--adapter") }
        if scanTimeout != nil { names.append("--scan-timeout") }
        if connectTimeout != nil { names.append("--connect-timeout") }
        if noPair { names.append("--no-pair") }
        return names
    }

    /// The scan timeout in effect, in seconds.
    var scanSeconds: Double { scanTimeout ?? Self.defaults.scanTimeout.seconds }

    /// The library's settings with what the user chose.
    var settings: BlueZFlashSettings {
        var s = BlueZFlashSettings()
        s.adapter = adapter
        s.adapters = adapters
        if let maxConnections { s.maxConnectionsPerAdapter = maxConnections }
        if let scanTimeout { s.scanTimeout = .milliseconds(Int64((scanTimeout * 1000).rounded())) }
        if let connectTimeout { s.connectTimeout = .milliseconds(Int64((connectTimeout * 1000).rounded())) }
        if noPair { s.pairWhenRequired = false }
        return s
    }
}
