import BlueZFlashing
import FirmwareImage
import Flasher
import Flashing
import Foundation
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Testing
import TestSupport

/// One table of bad files, four front doors: the command line onto a simulated board and onto a
/// board through BlueZ, and the library's `Flasher` (simulated and BlueZ backends) onto the same.
/// Every door refuses every file before anything is sent, in the same words, and the command
/// line exits 65 (a bad firmware file) whichever board it aims at.
@Suite(
    .serialized,
    .enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct BadFileTableTests {
    /// A bad file: its name, its bytes, and words every door's refusal holds.
    struct BadFile: CustomStringConvertible {
        var name: String
        var bytes: [UInt8]
        var expected: String
        var description: String { name }
    }

    static let v2 = SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .counter)

    /// The table: foreign chips by UF2 family, by address range and by SoftDevice; data beyond
    /// the flash; truncated and checksum-broken hex; a Nordic DFU package for another board; an
    /// MCUboot image with a bad hash; a file with no program and no application.
    static func table() async throws -> [BadFile] {
        var files: [BadFile] = []
        let family = ChipFamily.nrf52833
        files.append(
            BadFile(
                name: "other-family.uf2",
                bytes: UF2File.encode(v2.slice(family.layout.flash), familyID: 0xADA5_2840),
                expected: "is not for a micro:bit V2: the UF2 blocks name chip family 0xADA52840 (nRF52840)"))
        var beyond = v2
        try beyond.write(Array(repeating: 0x42, count: 16), at: 0x0009_0000)
        files.append(
            BadFile(
                name: "beyond-flash.hex", bytes: IntelHexWriter.write(beyond),
                expected: "is not for a micro:bit V2"))
        let hex = IntelHexWriter.write(v2)
        files.append(BadFile(name: "truncated.hex", bytes: Array(hex.prefix(hex.count / 2)), expected: "truncated"))
        var broken = hex
        // The checksum of the first data record (its last two digits before the line end).
        let lineEnd = try #require(broken.firstIndex(of: UInt8(ascii: "\n")))
        let second = try #require(broken[(lineEnd + 1)...].firstIndex(of: UInt8(ascii: "\n")))
        let digit = second - (broken[second - 1] == UInt8(ascii: "\r") ? 2 : 1)
        broken[digit] = broken[digit] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        files.append(BadFile(name: "checksum.hex", bytes: broken, expected: "checksum"))
        // A stock micro:bit V1's Nordic DFU package (legacy DFU), made by `bitflash convert`.
        let zip = FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-v1-\(UUID().uuidString).zip")
        let made = try await Bitflash.offPoolRun([
            "convert", C.sample("sample-r1-counter.hex").path, "--board", "microbit-v1", "--to",
            "nordic-dfu-zip", "-o", zip.path
        ])
        #expect(made.status == 0, "\(made.stderr)")
        files.append(
            BadFile(name: "v1-legacy.zip", bytes: Array(try Data(contentsOf: zip)), expected: "v1-legacy.zip"))
        var image = try MCUbootImage.build(
            application: v2.read(family.layout.applicationStart..<(family.layout.applicationStart + 0x4000)),
            version: MCUbootVersion(major: 1), headerSize: UInt16(family.layout.pageSize))
        image[image.count / 2] ^= 0xFF
        files.append(BadFile(name: "bad-hash.bin", bytes: image, expected: "the MCUboot image is damaged"))
        var empty = MemoryImage()
        try empty.write([0x00, 0x00, 0x02, 0x20], at: 0x1000_1014)
        files.append(BadFile(name: "uicr-only.hex", bytes: IntelHexWriter.write(empty), expected: "uicr-only.hex"))
        if Corpus.isAvailable {
            let real = Corpus.testdata.appendingPathComponent("real/uf2-nrf52840-s140-softdevice-6.1.1.uf2")
            files.append(
                BadFile(
                    name: "nrf52840-softdevice.uf2", bytes: Array(try Data(contentsOf: real)),
                    expected: "the file holds a SoftDevice (FWID 0x00B6)"))
        } else {
            print("BadFileTableTests: \(Corpus.skipMessage); the corpus's nRF52840 SoftDevice UF2 left out")
        }
        return files
    }

    /// The library's words for `file` onto a simulated micro:bit V2: the reader's error, or the
    /// policy's refusal.
    static func librarySimulated(_ path: String, _ bytes: [UInt8]) throws -> String {
        let firmware: Firmware
        do { firmware = try Firmware.parse(bytes, fileName: path) } catch let error as FirmwareImageError {
            return error.message
        }
        var sim = Simulation(link: .deviceRequested)
        let board = sim.addBoard(try SimulatedBoard(.microbitV2, image: v2, bluetoothInApplicationMode: true))
        let before = try sim.board(board).flash.image
        do {
            let run = try Flasher(.simulated(resume: nil)).flash(firmware, onSimulated: board, named: "sim", in: &sim)
            Issue.record("\(path) was flashed by the library: \(run.result)")
            return ""
        } catch let refusal as FlashRefusal {
            #expect(try sim.board(board).flash.image == before, "nothing was written")
            return refusal.message
        }
    }

    @Test(
        "every bad file is refused by the command line and the library, simulated and through BlueZ, in the same words")
    func everyFrontDoorRefusesTheSameFilesAlike() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bitflash-badfiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let fake = try FakeBlueZProcess()
        var settings = BlueZFlashSettings()
        settings.busAddress = fake.bus.address
        settings.scanTimeout = .seconds(5)
        settings.resumeStore = nil
        settings.lastBoard = nil
        let flasher = Flasher(.bluez(settings))
        for file in try await Self.table() {
            let path = dir.appendingPathComponent(file.name).path
            try Data(file.bytes).write(to: URL(fileURLWithPath: path))

            let simulated = try Self.librarySimulated(path, file.bytes)
            #expect(simulated.contains(file.expected), "\(file): \(simulated)")

            var throughBlueZ: FlashResult?
            if let firmware = try? Firmware.parse(file.bytes, fileName: path) {
                for await update in try flasher.flash(firmware, on: [FakeBlueZProcess.address]) {
                    if case let .finished(r) = update { throughBlueZ = r.result }
                }
                let r = try #require(throughBlueZ)
                #expect(r.error == simulated, "\(file): the library through BlueZ says \(r.error ?? "nothing")")
                #expect(r.failureKind == .badFirmware && r.bytesSent == 0, "\(file)")
            }

            let cliSimulated = try await Bitflash.offPoolRun([
                "flash", path, "--simulate", "microbit-v2", "--sim-state", dir.appendingPathComponent("s").path
            ])
            let cliBlueZ = try await Bitflash.runAsync(
                ["flash", path, "--device", FakeBlueZProcess.address], bus: fake.bus.address)
            for (door, run) in [("--simulate", cliSimulated), ("--device", cliBlueZ)] {
                #expect(run.status == 65, "\(file) \(door): \(run.status) \(run.stderr)")
                #expect(run.stderr.contains(simulated), "\(file) \(door): \(run.stderr)\nlibrary: \(simulated)")
            }
        }
        try C.expectBoardHolds("sample-r1-heart.hex", stateFile: fake.stop())
    }

    typealias C = BlueZCommandTests
}
