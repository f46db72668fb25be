// sample-memory-map: read a board's memory map with the partial-flashing protocol.
//
//     swift run sample-memory-map
//
// The reader is the same `MemoryMapReader` flow bitflash runs on a real board: STATUS, then
// REGION_INFO 1 (runtime) and 2 (program). Here it runs on a simulated micro:bit V2.
import FirmwareImage
import PartialFlashing
import SampleFirmware
import SimulatedBoard

let image = SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart)
var simulation = Simulation(link: .deviceRequested)
let board = simulation.addBoard(try SimulatedBoard(.microbitV2, image: image, bluetoothInApplicationMode: true))

let run = simulation.run(MemoryMapReader(family: .nrf52833), on: board, deadline: .seconds(30))
let map = try run.outcome.get()

func hex(_ value: UInt32) -> String { "0x" + String(value, radix: 16, uppercase: true) }
print("mode: \(map.mode), protocol version \(map.protocolVersion)")
print("runtime: \(hex(map.runtime.start))-\(hex(map.runtime.end)), hash \(map.runtime.hash.hexString)")
print("program: \(hex(map.program.start))-\(hex(map.program.end)), hash \(map.program.hash.hexString)")
print("read in \(run.modelledTime) of modelled time")
