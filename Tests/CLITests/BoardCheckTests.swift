import FirmwareImage
import Foundation
import SampleFirmware
import Testing
import TestSupport

/// Firmware for another chip is refused with what was found and what the board needs (exit 65),
/// before anything is sent; `--force` overrides only the UF2 family and MCUboot layout checks.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct BoardCheckTests {
    static let v2 = SampleFirmware.image(family: .nrf52833, runtime: .r2, program: .heart)

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func theNRF52840SoftDeviceUF2IsRefusedEvenWithForce() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let file = Corpus.testdata.appendingPathComponent("real/uf2-nrf52840-s140-softdevice-6.1.1.uf2").path
        for extra in [[], ["--force"]] {
            let state = dir.appendingPathComponent("s\(extra.count)")
            let r = try BitflashBinary.run(["flash", file, "--simulate", "--sim-state", state.path] + extra)
            #expect(r.status == 65, "\(r.stdout)")
            #expect(
                r.stderr.contains(
                    "is not for a micro:bit V2: the UF2 blocks name chip family 0xADA52840 (nRF52840); a micro:bit V2 needs 0x621E937A (nRF52833)"
                ), "\(r.stderr)")
            #expect(
                r.stderr.contains("the file holds a SoftDevice (FWID 0x00B6) that ends at 0x00026000"), "\(r.stderr)")
            #expect(r.stderr.contains("--force does not override the SoftDevice check"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: state.path), "the board was not touched")
        }
        // plan and convert refuse it too.
        let plan = try BitflashBinary.run(["plan", file, "--board", "microbit-v2"])
        #expect(plan.status == 65 && plan.stderr.contains("is not for a micro:bit V2"), "\(plan.stderr)")
        let convert = try BitflashBinary.run([
            "convert", file, "--board", "microbit-v2", "--to", "hex", "-o", dir.appendingPathComponent("x.hex").path
        ])
        #expect(convert.status == 65 && convert.stderr.contains("is not for a micro:bit V2"), "\(convert.stderr)")
    }

    @Test func aUF2WithAnUnknownFamilyIsRefusedUnlessForced() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let file = dir.appendingPathComponent("deadbeef.uf2")
        try Data(UF2File.encode(Self.v2.slice(ChipFamily.nrf52833.layout.flash), familyID: 0xDEAD_BEEF)).write(to: file)
        let refused = try BitflashBinary.run([
            "flash", file.path, "--simulate", "--sim-state", dir.appendingPathComponent("a").path
        ])
        #expect(refused.status == 65)
        #expect(
            refused.stderr.contains(
                "deadbeef.uf2 is not for a micro:bit V2: the UF2 blocks name chip family 0xDEADBEEF; a micro:bit V2 needs 0x621E937A (nRF52833) (--force flashes it anyway)"
            ),
            "\(refused.stderr)")
        let forced = try BitflashBinary.run([
            "flash", file.path, "--simulate", "--sim-state", dir.appendingPathComponent("b").path, "--force"
        ])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(
            forced.stderr.contains(
                "warning: \(file.path): flashing it anyway (--force): the UF2 blocks name chip family 0xDEADBEEF"),
            "\(forced.stderr)")
        #expect(forced.stdout.contains("verified"))
        // The right family ID needs no force.
        let right = dir.appendingPathComponent("v2.uf2")
        try Data(UF2File.encode(Self.v2.slice(ChipFamily.nrf52833.layout.flash), familyID: UF2Family.nrf52833)).write(
            to: right)
        let plain = try BitflashBinary.run([
            "flash", right.path, "--simulate", "--sim-state", dir.appendingPathComponent("c").path
        ])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(!plain.stderr.contains("warning"))
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func anNRF52840DKMCUbootImageIsRefusedBeforeAnythingIsSent() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let file = Corpus.testdata.appendingPathComponent("real/mcuboot-nrf52840dk-smp-ble-ecdsa.signed.bin").path
        let expected =
            "the MCUboot header is 0x0200 bytes, so the application would start at 0x0001B200; a micro:bit V2's MCUboot images have a one-page header (0x1000)"
        // Over UDP (nothing listens on port 9: the refusal comes first), as the file and as --dfu-image.
        for args in [
            ["flash", file, "--udp", "127.0.0.1:9"],
            ["flash", BitflashBinary.sample("sample-r1-heart.hex").path, "--udp", "127.0.0.1:9", "--dfu-image", file],
            ["flash", file, "--simulate", "--sim-state", dir.appendingPathComponent("s").path]
        ] {
            let r = try BitflashBinary.run(args)
            #expect(r.status == 65, "\(args): \(r.stdout)\(r.stderr)")
            #expect(r.stderr.contains(expected), "\(r.stderr)")
            #expect(r.stderr.contains("(--force flashes it anyway)"), "\(r.stderr)")
        }
        // 225,131 bytes do not fit a micro:bit V1's slot, and --force does not change that.
        let v1 = try BitflashBinary.run([
            "flash", file, "--simulate", "microbit-v1-mcuboot", "--sim-state", dir.appendingPathComponent("v1").path,
            "--force"
        ])
        #expect(v1.status == 65)
        #expect(
            v1.stderr.contains("a micro:bit V1's primary slot (0x00017C00-0x0003B400) holds 145,408"), "\(v1.stderr)")
        #expect(v1.stderr.contains("--force does not override the MCUboot slot check"), "\(v1.stderr)")
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func anIMXRTImageIsRefusedOnNRF51BoardsAndConvertSaysTheSame() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let file = Corpus.testdata.appendingPathComponent("real/mcuboot-mimxrt1060-hdr400-rsa.signed.bin").path
        let problem = "its vector table sets the stack pointer to 0x8000BF80 and the reset handler to 0x600255A5"
        for profile in ["microbit-v1", "microbit-v1-mcuboot", "calliope-mini-1"] {
            for extra in [[], ["--force"]] {
                let state = dir.appendingPathComponent("\(profile)\(extra.count)")
                let r = try BitflashBinary.run(
                    ["flash", file, "--simulate", profile, "--sim-state", state.path] + extra)
                #expect(r.status == 65, "\(profile) \(extra): \(r.stdout)\(r.stderr)")
                #expect(r.stderr.contains(problem), "\(r.stderr)")
                #expect(!FileManager.default.fileExists(atPath: state.path), "the board was not touched")
            }
        }
        // convert and plan read the image the way flash does, and refuse it with the same words.
        for to in ["hex", "bin", "mcuboot"] {
            let r = try BitflashBinary.run([
                "convert", file, "--board", "microbit-v1", "--to", to, "-o", dir.appendingPathComponent("x.\(to)").path
            ])
            #expect(r.status == 65 && r.stderr.contains(problem), "\(to): \(r.stderr)")
        }
        let plan = try BitflashBinary.run(["plan", file, "--board", "calliope-mini-1"])
        #expect(plan.status == 65 && plan.stderr.contains(problem), "\(plan.stderr)")
    }

    @Test func aHexWithDataBeyondTheFlashIsRefused() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        var image = SampleFirmware.image(family: .nrf51, runtime: .r1, program: .heart)
        try image.write([1, 2, 3, 4], at: 0x8_0000)
        let file = dir.appendingPathComponent("big.hex")
        try Data(IntelHexWriter.write(image)).write(to: file)
        let r = try BitflashBinary.run([
            "flash", file.path, "--simulate", "microbit-v1", "--sim-state", dir.appendingPathComponent("s").path,
            "--force"
        ])
        #expect(r.status == 65)
        #expect(
            r.stderr.contains(
                "the file puts 4 bytes at addresses a micro:bit V1 has no memory for (first 0x00080000-0x00080004)"),
            "\(r.stderr)")
    }
}
