import ArgumentParser
import BlueZFlashing
import Foundation
import Transport

/// `bitflash scan`: the boards in range, through BlueZ.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List the micro:bit and Calliope mini boards in Bluetooth range.",
        discussion: """
            Scans with BlueZ for devices that advertise the partial-flashing or McuMgr service or a \
            board's name (and boards BlueZ already knows); --all lists every LE device. Exit codes: 0 done (even when nothing \
            was found), 75 Bluetooth not available.
            """)

    @Option(help: ArgumentHelp("How long to scan, in seconds.", valueName: "S"))
    var timeout: Double = 5

    @Option(help: ArgumentHelp("The Bluetooth adapter (default: the first one switched on).", valueName: "hciN"))
    var adapter: String?

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(help: "List every Bluetooth LE device seen, not only boards.")
    var all = false

    func validate() throws {
        guard timeout > 0, timeout <= 600 else { throw ValidationError("--timeout must be between 0 and 600 seconds") }
    }

    func run() async throws {
        try await runCommand {
            var settings = BlueZFlashSettings()
            settings.adapter = adapter
            let found = try await BlueZFlasher(settings: settings).scan(for: .milliseconds(Int64((timeout * 1000).rounded())), everything: all)
            if json {
                StdOut.write(try JSONText.document(found) + "\n")
            } else {
                StdOut.write(Self.text(found, seconds: timeout))
            }
            return .ok
        }
    }

    static func text(_ boards: [FoundBoard], seconds: Double) -> String {
        guard !boards.isEmpty else {
            return "no boards found in \(seconds.formatted()) s; check they are powered and advertising (pairing mode: hold A+B, press reset)\n"
        }
        var out = "NAME                          ADDRESS            RSSI  KIND\n"
        for b in boards {
            var name = b.name ?? "(no name)"
            if name.count > 29 { name = name.prefix(28) + "…" }
            name = name.padding(toLength: 29, withPad: " ", startingAt: 0)
            let rssi = (b.rssi.map(String.init) ?? "-").padding(toLength: 5, withPad: " ", startingAt: 0)
            var kind = b.kind
            if b.connected { kind += ", connected" }
            if b.paired { kind += ", paired" }
            out += "\(name) \(b.address)  \(rssi) \(kind)\n"
            if !b.services.isEmpty {
                let more = b.services.count > 6 ? " and \(b.services.count - 6) more" : ""
                out += "    services: \(b.services.prefix(6).joined(separator: ", "))\(more)\n"
            }
        }
        return out
    }
}
