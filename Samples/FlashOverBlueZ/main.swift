// sample-flash-bluez: find a real board by name through BlueZ and flash a file onto it, with
// a progress line.
//
//     swift run sample-flash-bluez zotig Samples/firmware/sample-r1-counter.hex
//
// NAME is any part of the board's name (`zotig` for `BBC micro:bit [zotig]`). The board must
// be advertising: running a program with Bluetooth, or in pairing mode (hold A+B, press reset).
// An unchanged runtime is flashed partially (only the program), anything else by a full update.
import BlueZFlashing
import Diagnostics
import FirmwareImage
import Flasher
import Flashing
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 else {
    print("usage: sample-flash-bluez NAME FILE")
    exit(64)
}
let (name, path) = (arguments[0], arguments[1])
let firmware = try Firmware.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: path))), fileName: path)

// bitflash's one flasher (the command line's policy) over real boards through BlueZ.
let flasher = Flasher(.bluez(BlueZFlashSettings()))
// Ends as soon as the board shows, or after 20 s.
let boards = try await flasher.bluez!.scan(for: .seconds(20), until: .board(name))
guard let board = boards.first(where: { $0.name?.localizedCaseInsensitiveContains(name) ?? false }) else {
    print("no board called '\(name)' in range; seen: \(boards.map { $0.name ?? $0.address })")
    exit(69)
}
print("flashing \(path) onto \(board.name ?? "?") (\(board.address))")

/// This sample's exit codes, by what kind of failure the library reports.
func exitCode(_ kind: FailureKind?) -> Int32 {
    switch kind {
    case .badFirmware?, .malformedData?, .invalidRequest?: return 65
    case .boardUnavailable?: return 69
    case .bluetoothUnavailable?, .heldElsewhere?: return 75
    default: return 74
    }
}

var phase = ""
var shown = -1
var status: Int32 = 0
for await update in try flasher.flash(firmware, on: [board.address]) {
    switch update {
    case let .event(event):
        switch event.report {
        case let .phase(p):
            phase = p.rawValue
            shown = -1
        case let .progress(done, total, _) where total > 0 && done * 10 / total != shown:
            // One line, rewritten in place as the flash moves on.
            shown = done * 10 / total
            let label = phase.padding(toLength: 20, withPad: " ", startingAt: 0)
            let line = "\r\(label) " + String(format: "%3d%%  %6.1f s", done * 100 / total, event.elapsed.seconds)
            print(line, terminator: "")
            fflush(nil)
        case let .decision(_, message):
            print("decision: \(message)")
        default:
            break
        }
    case let .warning(_, message):
        print("\nwarning: \(message)")
    case let .finished(result):
        print("")
        if let error = result.result.error {
            print("failed: \(error)")
            status = exitCode(result.result.failureKind)
        } else {
            print(
                "\(result.result.path?.rawValue ?? "-") in \(String(format: "%.1f", result.result.seconds)) s, "
                    + "\(result.result.bytesSent) bytes, verified: \(result.result.verified)")
        }
    }
}
exit(status)
