import FirmwareImage
import Foundation
import SampleFirmware
import Testing
import TestSupport

/// What a device would refuse only after the upload (an image larger than its slot, an image
/// whose hash does not match its bytes) is refused before anything is sent, by `plan` too.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct RefusedBeforeSendingTests {
    let dir: URL
    init() throws { dir = try BitflashBinary.temporaryDirectory() }

    /// A MakeCode hex for a micro:bit V2 with four bytes just below the scratch page: its MCUboot
    /// image (one-page header, the application up to there, the TLVs) is 36 bytes too large
    /// for the primary slot, while partial flashing can still write its program.
    func tooLargeForTheSlot() throws -> URL {
        var image = SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .counter)
        try image.write([1, 2, 3, 4], at: ChipFamily.nrf52833.layout.scratchPage - 8)
        let file = dir.appendingPathComponent("edge.hex")
        try Data(IntelHexWriter.write(image)).write(to: file)
        return file
    }

    @Test("plan offers no McuMgr path for an image larger than the slot, and says why")
    func planSaysTheImageDoesNotFit() throws {
        let r = try BitflashBinary.run(["plan", try tooLargeForTheSlot().path, "--board", "microbit-v2", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let plan = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(plan["fullImageBytes"] as? Int == 360_484, "\(r.stdout)")
        let notes = (plan["notes"] as? [String]) ?? []
        #expect(
            notes.contains { $0.contains("McuMgr excluded") && $0.contains("the board's slot holds 360448") },
            "\(notes)")
        let estimates = ((plan["byProfile"] as? [[String: Any]]) ?? []).flatMap {
            ($0["estimates"] as? [[String: Any]]) ?? []
        }
        #expect(!estimates.isEmpty && !estimates.contains { "\($0)".contains("mcumgr") }, "\(estimates)")
    }

    @Test(
        "a full update of an image larger than the slot exits 65 before the upload, not 74 after it, and says no retry")
    func fullUpdateOfAnImageTooLargeIsRefusedFirst() throws {
        let r = try BitflashBinary.run([
            "flash", try tooLargeForTheSlot().path, "--simulate", "microbit-v2-mcuboot", "--mode", "full",
            "--sim-state", dir.appendingPathComponent("s").path, "--json"
        ])
        #expect(r.status == 65, "\(r.stderr)")
        #expect(
            r.stderr.contains("it has 360484 bytes and the board's slot holds 360448")
                && r.stderr.contains("nothing was sent"), "\(r.stderr)")
        #expect(
            !r.stderr.contains("IMAGE_TOO_LARGE") && !r.stderr.lowercased().contains("run the same command again"),
            "\(r.stderr)")
        #expect(!r.stdout.contains("\"upload\""), "an upload started: \(r.stdout.prefix(400))")
        // Partial flashing still writes its program onto the same board.
        let partial = try BitflashBinary.run([
            "flash", try tooLargeForTheSlot().path, "--simulate", "microbit-v2-mcuboot",
            "--sim-state", dir.appendingPathComponent("s").path
        ])
        #expect(partial.status == 0, "\(partial.stderr)")
    }

    @Test(
        "an MCUboot image whose hash does not match its bytes is refused by plan and flash before anything is sent, even with --force"
    )
    func damagedImageIsRefusedBeforeTheUpload() throws {
        let good = dir.appendingPathComponent("good.bin")
        let convert = try BitflashBinary.run([
            "convert", BitflashBinary.sample("sample-r2-heart.hex").path, "--board", "microbit-v2",
            "--to", "mcuboot", "-o", good.path
        ])
        #expect(convert.status == 0, "\(convert.stderr)")
        var bytes = try Data(contentsOf: good)
        bytes[0x1000 + 100] ^= 0xFF
        let bad = dir.appendingPathComponent("bad.bin")
        try bytes.write(to: bad)
        let state = dir.appendingPathComponent("s").path
        for arguments in [
            ["plan", bad.path],
            ["flash", bad.path, "--simulate", "microbit-v2-mcuboot", "--sim-state", state],
            [
                "flash", BitflashBinary.sample("sample-r2-heart.hex").path, "--dfu-image", bad.path,
                "--simulate", "microbit-v2-mcuboot", "--sim-state", state, "--force"
            ]
        ] {
            let r = try BitflashBinary.run(arguments)
            #expect(r.status == 65, "\(arguments): \(r.stderr)")
            #expect(
                r.stderr.contains("\(bad.path): the MCUboot image is damaged: its hash TLV says")
                    && r.stderr.contains("(nothing was sent)"), "\(r.stderr)")
            #expect(r.stdout.isEmpty, "\(arguments): \(r.stdout.prefix(300))")
        }
        // The board was never touched: no state was saved.
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("s/sim.json").path))
        let fine = try BitflashBinary.run([
            "flash", good.path, "--simulate", "microbit-v2-mcuboot", "--sim-state", state
        ])
        #expect(fine.status == 0, "\(fine.stderr)")
    }
}
