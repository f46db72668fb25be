import ArgumentParser
import FirmwareImage
import Foundation
import SampleFirmware

/// `bitflash-lab sim samples DIR`: writes the sample firmware files (Samples/firmware/ in the repository).
struct SimSamplesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "samples",
        abstract: "Write the sample firmware files: Universal Hex files for micro:bit V1 and V2.",
        discussion: """
            runtime r1 with the 'heart' program, r1 with the 'counter' program (an edit: partial \
            flashing sends only the program) and runtime r2 with 'heart' (a new runtime: a full update). \
            The files are made by SampleFirmware and UniversalHexWriter; the same version of bitflash \
            always writes the same bytes.
            """)

    @Argument(help: ArgumentHelp("The folder to write to (created when missing).", valueName: "DIR"))
    var directory: String

    /// One sample file: which runtime and program, for both chip families.
    struct Sample {
        var runtime: SampleFirmware.RuntimeID
        var program: SampleFirmware.ProgramID
        var fileName: String { "sample-\(runtime.rawValue)-\(program.rawValue).hex" }
        var summary: String {
            switch (runtime, program) {
            case (.r1, .heart): return "what a fresh simulated board holds"
            case (.r1, _): return "an edit of the program: partial flashing sends only the program region"
            default: return "a new runtime: partial flashing is impossible, a full update follows"
            }
        }
    }

    static let samples: [Sample] = [
        .init(runtime: .r1, program: .heart), .init(runtime: .r1, program: .counter),
        .init(runtime: .r2, program: .heart)
    ]

    /// The bytes of a sample file: a Universal Hex with an nRF51 (0x9900) and an nRF52833 (0x9903) section.
    static func bytes(of sample: Sample) -> [UInt8] {
        let sections = [(UInt16(0x9900), ChipFamily.nrf51), (UInt16(0x9903), ChipFamily.nrf52833)].map { id, family in
            UniversalHexWriter.Section(
                boardID: id,
                image: SampleFirmware.image(family: family, runtime: sample.runtime, program: sample.program))
        }
        return UniversalHexWriter.write(sections)
    }

    func run() async throws {
        try await runCommand {
            let dir = URL(fileURLWithPath: directory)
            for sample in Self.samples {
                let url = dir.appendingPathComponent(sample.fileName)
                let bytes = Self.bytes(of: sample)
                do {
                    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                } catch {
                    throw CLIError(
                        .cannotWrite,
                        "\(dir.path): cannot make the folder: \((error as NSError).localizedFailureReason ?? "it is not a folder or cannot be created")"
                    )
                }
                try OutputFile.write(bytes, to: url.path, what: "the sample")
                StdOut.write("wrote \(url.path): \(Figures.grouped(bytes.count)) bytes, \(sample.summary)\n")
            }
            return .ok
        }
    }
}
