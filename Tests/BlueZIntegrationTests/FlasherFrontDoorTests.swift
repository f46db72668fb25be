@testable import Commands
import FirmwareImage
import Flasher
import Flashing
import Foundation
import Laboratory
import SampleFirmware
import SimulatedBoard
import Testing
import TestSupport

/// The command line is a thin user of the library's `Flasher`: the same request (a file onto a
/// fresh simulated board of the same kind, on the same link) gets the same result and the same
/// refusal through `bitflash flash … --simulate` as through `Flasher` in a program.
@Suite(.enabled(if: Bitflash.url != nil, "the bitflash binary is missing: front-door tests skipped"))
struct FlasherFrontDoorTests {
    /// The command line's simulated board `sim` of `profile`, as a first run makes it.
    static func freshBoard(_ profile: SimProfile, in sim: inout Simulation) throws -> BoardID {
        sim.addBoard(try profile.makeBoard(holding: profile.factoryImage(), name: "sim", address: SimStore.address(1)))
    }

    /// The flasher the command line makes for `flash FILE --simulate` with no other option.
    static var commandLineFlasher: Flasher {
        var options = FlashOptions()
        options.mcumgr.estimatedSwapTime = .seconds(2)
        return Flasher(.simulated(resume: nil), options: options)
    }

    static func state() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("bitflash-frontdoor-\(UUID().uuidString)")
    }

    @Test("a file flashed through the command line and through the Flasher takes the same path, bytes and time")
    func commandLineAndLibraryFlashAlike() throws {
        let file = BlueZCommandTests.sample("sample-r2-heart.hex")
        for profile in [SimProfile.default, SimProfile(board: .microbitV1, mcuboot: false)] {
            let run = try BitflashBinary.run([
                "flash", file.path, "--simulate", profile.description, "--sim-state", Self.state().path, "--json"
            ])
            let cli = try #require(
                try BlueZCommandTests.json(run).last { $0["type"] as? String == "result" }, "\(run.stderr)")

            var sim = Simulation(link: .deviceRequested)
            let board = try Self.freshBoard(profile, in: &sim)
            let firmware = try Firmware.parse([UInt8](Data(contentsOf: file)), fileName: file.path)
            let library = try Self.commandLineFlasher.flash(firmware, onSimulated: board, named: "sim", in: &sim).result

            #expect(run.status == Commands.ExitStatus(library).rawValue, "\(profile): \(run.stderr)")
            #expect(cli["path"] as? String == library.path?.rawValue, "\(profile)")
            #expect(cli["bytesSent"] as? Int == library.bytesSent, "\(profile)")
            #expect((cli["reason"] as? [String: Any])?["code"] as? String == library.reason.code, "\(profile)")
            #expect(cli["verified"] as? Bool == library.verified, "\(profile)")
            let seconds = try #require(cli["seconds"] as? Double)
            #expect(abs(seconds - library.seconds) < 0.001, "\(profile): \(seconds) s and \(library.seconds) s")
        }
    }

    @Test("a file for no board is refused by the command line and the Flasher in the same words and status")
    func commandLineAndLibraryRefuseAlike() throws {
        var beyond = SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .counter)
        try beyond.write(Array(repeating: 0x42, count: 16), at: 0x0009_0000)
        let path = Self.state().path + "-beyond.hex"
        try Data(IntelHexWriter.write(beyond)).write(to: URL(fileURLWithPath: path))
        let run = try BitflashBinary.run([
            "flash", path, "--simulate", "microbit-v2", "--sim-state", Self.state().path, "--force"
        ])

        var sim = Simulation(link: .deviceRequested)
        let board = try Self.freshBoard(SimProfile(board: .microbitV2, mcuboot: false), in: &sim)
        var flasher = Self.commandLineFlasher
        flasher.plan.force = true
        flasher.plan.fileLabel = path
        let firmware = try Firmware.parse(IntelHexWriter.write(beyond), fileName: path)
        let refusal: FlashRefusal
        do {
            let flashed = try flasher.flash(firmware, onSimulated: board, named: "sim", in: &sim)
            Issue.record("the Flasher flashed a file for no board: \(flashed.result)")
            return
        } catch let error as FlashRefusal {
            refusal = error
        }
        #expect(refusal.kind == .notForBoard && !refusal.overridable)
        #expect(run.status == Commands.ExitStatus(refusal.failureKind).rawValue, "\(run.stderr)")
        #expect(run.stderr.contains(refusal.message), "\(run.stderr)\nlibrary: \(refusal.message)")
    }
}
