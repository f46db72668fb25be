// sample-flash: flash a firmware file onto a simulated micro:bit V2 with a progress callback.
//
//     swift run sample-flash Samples/firmware/sample-r1-counter.hex
//
// The board starts with the sample runtime r1 and the 'heart' program, so a file with the
// same runtime is flashed partially (only the program), any other with a full McuMgr update.
import FirmwareImage
import Flasher
import Flashing
import Foundation
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing

let path = CommandLine.arguments.dropFirst().first ?? "Samples/firmware/sample-r1-counter.hex"
let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
let firmware = try Firmware.parse(bytes, fileName: path)

// A simulated micro:bit V2 with an MCUboot bootloader whose primary slot holds r1 + heart.
let factory = SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart)
let application = try FlashPlan.applicationImage(of: factory, family: .nrf52833)!
var simulation = Simulation(link: .deviceRequested)
let board = simulation.addBoard(try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: application.bytes))

// The library's policy plans the file for the board first: a file for another board is refused
// here with the words the command line uses (FlashRefusal), before anything is sent.
let run: SimulatedFlashRun
do {
    // bitflash's one flasher (the command line's policy) over simulated boards.
    run = try Flasher(.simulated(resume: nil)).flash(
        firmware, onSimulated: board, named: "micro:bit", in: &simulation,
        onEvent: { event in
            switch event.report {
            case let .phase(phase):
                print(String(format: "%7.3f s  %@", event.elapsed.seconds, phase.rawValue))
            case let .progress(done, total, _) where done == total || done * 4 / total != (done - 1) * 4 / total:
                print(
                    String(format: "%7.3f s  %3d%%  %d of %d", event.elapsed.seconds, done * 100 / total, done, total))
            default:
                break
            }
        })
} catch let refusal as FlashRefusal {
    print("refused (\(refusal.kind.rawValue)): \(refusal.message)")
    exit(65)
}

let result = run.result
if let error = result.error {
    print("failed: \(error)")
    exit(1)
}
print("\(result.path?.rawValue ?? "-"): \(result.reason.message)")
print(
    "\(result.bytesSent) bytes in \(String(format: "%.2f", result.seconds)) modelled seconds, verified: \(result.verified)"
)
