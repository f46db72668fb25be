import ArgumentParser
import BlueZTransport
import Foundation
import Transport

/// `bitflash scan`: the boards in range, through BlueZ.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List the micro:bit and Calliope mini boards in Bluetooth range.",
        discussion: """
            Scans with BlueZ for boards advertising the partial-flashing or McuMgr service (and boards \
            BlueZ already knows); --all lists every LE device. Exit codes: 0 done (even when nothing \
            was found), 75 Bluetooth not available.
            """)

    @Option(parsing: .unconditional, help: Limits.bluetoothSeconds.help("How long to scan, in seconds", valueName: "S"),
            transform: Limits.bluetoothSeconds.transform)
    var timeout: Double = 5

    @Option(help: ArgumentHelp("The Bluetooth adapter (default: the first one switched on).", valueName: "hciN"))
    var adapter: String?

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(help: "List every Bluetooth LE device seen, not only boards (no service filter).")
    var all = false

    struct Shown: Codable, Equatable {
        var name: String?
        var address: String
        var rssi: Int?
        var services: [String]
        var kind: String
        var connected: Bool
        var paired: Bool
    }

    func run() async throws {
        try await runCommand {
            let bus = try await BlueZBus.open()
            defer { bus.close() }
            let devices = try await BlueZScanner(bus: bus, adapter: adapter)
                .scan(timeout: .seconds(timeout), services: all ? nil : KnownGATT.flashingServices)
                .filter { all || $0.looksFlashable }
            let shown = devices.map {
                Shown(name: $0.name, address: $0.address, rssi: $0.rssi, services: $0.services.map(Self.serviceName),
                      kind: $0.boardKindGuess, connected: $0.connected, paired: $0.paired)
            }
            if json {
                StdOut.write(try JSONText.document(shown) + "\n")
            } else {
                StdOut.write(Self.text(shown, seconds: timeout))
            }
            return .ok
        }
    }

    static func serviceName(_ uuid: BLEUUID) -> String {
        switch uuid {
        case KnownGATT.partialFlashingService: return "partial-flashing"
        case KnownGATT.smpService: return "mcumgr"
        case KnownGATT.microbitDFUControlService: return "dfu-control"
        case KnownGATT.secureDFUService: return "secure-dfu"
        default: return uuid.uuidString
        }
    }

    static func text(_ boards: [Shown], seconds: Double) -> String {
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
