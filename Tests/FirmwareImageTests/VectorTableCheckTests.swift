import Diagnostics
import FirmwareImage
import Testing
import TestSupport

/// Code built for another chip is a problem no flag overrides, whatever its container: the vector
/// table the board would start (stack pointer in the chip's RAM, reset handler in the code) says so,
/// where the UF2 family, the SoftDevice and the MCUboot header size may not.
@Suite struct VectorTableCheckTests {
    /// A vector table for `family`'s application start: the stack at the top of RAM, the reset
    /// handler `offset` bytes into the application, with the Thumb bit.
    static func vectors(stack: UInt32, reset: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        for word in [stack, reset] { LEBytes.put(&out, word) }
        return out
    }

    static func mcuboot(application: [UInt8], headerSize: UInt16) throws -> Firmware {
        let bytes = try MCUbootImage.build(
            application: application, version: MCUbootVersion(major: 1), headerSize: headerSize)
        return try Firmware.parse(bytes, fileName: "app.signed.bin")
    }

    static func refusals(_ firmware: Firmware, _ board: Board) -> [BoardProblem] {
        firmware.problems(for: board).filter { !$0.overridable }
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func mcubootImagesForAnIMXRTAndTFMAreRefusedOnEveryBoard() throws {
        for (path, reset) in [
            ("real/mcuboot-mimxrt1060-hdr400-rsa.signed.bin", "0x600255A5"),
            ("real/mcuboot-tfm-protected-tlvs.signed.bin", "0x100976D9")
        ] {
            let firmware = try Firmware.parse(try Corpus.bytes(path), fileName: path)
            for board in Board.allCases {
                let refusals = Self.refusals(firmware, board)
                #expect(
                    refusals.contains { $0.message.contains("reset handler to \(reset)") },
                    "\(path) on \(board): \(firmware.problems(for: board))")
            }
        }
    }

    @Test func anMCUbootImageIsCheckedWhereTheBoardsMCUbootStartsIt() throws {
        // The i.MX RT1060's first words with a header of one nRF51 page: only the code says it.
        let foreign = try Self.mcuboot(
            application: Self.vectors(stack: 0x8000_BF80, reset: 0x6002_55A5) + [UInt8](repeating: 0x11, count: 256),
            headerSize: 0x400)
        let refusals = Self.refusals(foreign, .microbitV1)
        #expect(refusals.count == 1, "\(foreign.problems(for: .microbitV1))")
        #expect(
            refusals.first?.message.contains(
                "sets the stack pointer to 0x8000BF80 and the reset handler to 0x600255A5; an nRF51822 needs the stack pointer inside its RAM (0x20000000-0x20008000)"
            ) == true, "\(refusals)")
        // The same size, linked for the micro:bit V1's application start (0x18000, after the header).
        let own = try Self.mcuboot(
            application: Self.vectors(stack: 0x2000_4000, reset: 0x1_8041) + [UInt8](repeating: 0x11, count: 256),
            headerSize: 0x400)
        #expect(own.problems(for: .microbitV1).isEmpty, "\(own.problems(for: .microbitV1))")
        // A reset handler past the image's end is not in its code either.
        let past = try Self.mcuboot(
            application: Self.vectors(stack: 0x2000_4000, reset: 0x1_9001) + [UInt8](repeating: 0x11, count: 256),
            headerSize: 0x400)
        #expect(Self.refusals(past, .microbitV1).count == 1)
    }

    @Test func convertAndFlashPlaceAnMCUbootImagesApplicationAtTheApplicationStart() throws {
        let body = Self.vectors(stack: 0x2002_0000, reset: 0x1_C041) + [UInt8](repeating: 0x22, count: 64)
        let firmware = try Self.mcuboot(application: body, headerSize: 0x1000)
        let image = try firmware.image(for: .microbitV2)
        #expect(image.runs == [0x1C000..<(0x1C000 + UInt32(body.count))])
        #expect(image.read(0x1C000..<(0x1C000 + UInt32(body.count))) == body)
    }
}
