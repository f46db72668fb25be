import Diagnostics
import FirmwareImage
import SampleFirmware
import Testing

/// The sample images carry code for their chip, as real MakeCode hexes do: the front doors'
/// vector-table check accepts them, and refuses one whose application is another chip's.
@Suite struct SampleVectorTableTests {
    static func vectors(stack: UInt32, reset: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        for word in [stack, reset] { LEBytes.put(&out, word) }
        return out
    }

    @Test func aHexWhoseApplicationIsForAnotherChipIsRefused() throws {
        var image = SampleFirmware.image(family: .nrf51, runtime: .r1, program: .heart)
        #expect(Firmware.sampleProblems(image, board: .microbitV1).isEmpty)
        try image.write(Self.vectors(stack: 0x8000_BF80, reset: 0x6002_55A5), at: 0x18000, overwrite: true)
        let problems = Firmware.sampleProblems(image, board: .microbitV1)
        #expect(problems.count == 1 && problems.first?.overridable == false, "\(problems)")
        #expect(
            problems.first?.message.contains("the code the board would start at 0x00018000 (the application start)")
                == true, "\(problems)")
    }

    @Test func everySampleImageHasCodeForItsChip() throws {
        for family in ChipFamily.allCases {
            for runtime in SampleFirmware.RuntimeID.allCases {
                let image = SampleFirmware.image(family: family, runtime: runtime, program: .counter)
                for board in Board.allCases where board.family == family {
                    #expect(Firmware.sampleProblems(image, board: board).isEmpty, "\(family) \(runtime) \(board)")
                }
            }
        }
    }
}

extension Firmware {
    /// The problems of a plain Intel HEX holding `image`, as `flash` reads it.
    static func sampleProblems(_ image: MemoryImage, board: Board) -> [BoardProblem] {
        guard let firmware = try? Firmware.parse(IntelHexWriter.write(image), fileName: "x.hex") else {
            return [BoardProblem(.outsideMemory, "unreadable", overridable: false)]
        }
        return firmware.problems(for: board)
    }
}
