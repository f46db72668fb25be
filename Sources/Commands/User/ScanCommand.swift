import ArgumentParser
import BlueZFlashing
import Diagnostics
import Foundation
import Transport

/// `bitflash scan`: the boards in range, through BlueZ.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List the micro:bit and Calliope mini boards in Bluetooth range.",
        discussion: """
            Scans with BlueZ (LE, no service filter: the boards advertise only their name) and lists \
            every micro:bit and Calliope mini seen, by name (BBC micro:bit, Calliope mini, with or \
            without the [zotig] friendly name), every board in its bootloader (DfuTarg) and every \
            board advertising the McuMgr service. For each: name, address, signal strength, mode and \
            whether this computer holds a bond with it. The mode is read from the name: without the \
            friendly name the board runs its program (a whitelisted build, seen by bonded computers \
            only); with it, pairing mode when bonded, else unknown (pairing mode and a program built \
            without whitelist advertise alike); DfuTarg is the bootloader. \
            Boards BlueZ only remembers are not listed until they advertise. \
            --wait-for and --count end the scan as soon as they are met. \
            Exit codes: 0 done (also when nothing was found, without --wait-for or --count), \
            69 --wait-for or --count not met in time, 75 Bluetooth not available.
            """)

    @Option(
        parsing: .unconditional,
        help: Limits.bluetoothSeconds.help("How long to scan, at most, in seconds", valueName: "S"),
        transform: Limits.bluetoothSeconds.transform)
    var timeout: Double = 5

    @Option(
        name: .customLong("wait-for"),
        help: ArgumentHelp(
            "End the scan as soon as this board (address, name or friendly name) is seen.", valueName: "ADDR|NAME"))
    var waitFor: String?

    @Option(
        parsing: .unconditional,
        help: Limits.boards.help("End the scan as soon as this many boards are seen", valueName: "N"),
        transform: Limits.boards.transform)
    var count: Int?

    @Option(help: ArgumentHelp("The Bluetooth adapter (default: the first one switched on).", valueName: "hciN"))
    var adapter: String?

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(help: "List every Bluetooth LE device seen, not only boards.")
    var all = false

    /// One line of the listing (the JSON has the same fields).
    struct Shown: Codable, Equatable {
        var name: String?
        var address: String
        var rssi: Int?
        var mode: FoundBoard.Mode
        var bonded: Bool
    }

    func validate() throws {
        if waitFor != nil, count != nil { throw ValidationError("give --wait-for or --count, not both") }
        if let waitFor, waitFor.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--wait-for needs an address or a name")
        }
    }

    var until: ScanUntil {
        if let waitFor { return .board(waitFor) }
        if let count { return .boards(count) }
        return .timeout
    }

    func run() async throws {
        try await runCommand {
            var settings = BlueZFlashSettings()
            settings.adapter = adapter
            let started = ContinuousClock.now
            let found = try await BlueZFlasher(settings: settings)
                .scan(for: .milliseconds(Int64((timeout * 1000).rounded())), everything: all, until: until)
            let elapsed = started.duration(to: .now).components
            let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            let shown = found.map {
                Shown(name: $0.name, address: $0.address, rssi: $0.rssi, mode: $0.mode, bonded: $0.bonded)
            }
            StdOut.write(json ? try JSONText.document(shown) + "\n" : Self.text(shown, seconds: seconds))
            if let missing = BlueZFlasher.missing(until, in: found) {
                StdErr.write(
                    "bitflash: \(missing) after \(String(format: "%.1f", seconds)) s; check the board is powered and in range "
                        + "(pairing mode: hold A+B, press reset), or scan longer with --timeout\n")
                return .boardNotFound
            }
            return .ok
        }
    }

    static func text(_ boards: [Shown], seconds: Double) -> String {
        guard !boards.isEmpty else {
            return
                "no boards found in \(String(format: "%.1f", seconds)) s; check they are powered and advertising (pairing mode: hold A+B, press reset)\n"
        }
        var out = "NAME                          ADDRESS            RSSI  MODE         BONDED\n"
        for b in boards {
            var name = b.name ?? "(no name)"
            if name.count > 29 { name = name.prefix(28) + "…" }
            name = name.padding(toLength: 29, withPad: " ", startingAt: 0)
            let rssi = (b.rssi.map(String.init) ?? "-").padding(toLength: 5, withPad: " ", startingAt: 0)
            let mode = b.mode.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)
            out += "\(name) \(b.address)  \(rssi) \(mode) \(b.bonded ? "yes" : "no")\n"
        }
        return out
    }
}
