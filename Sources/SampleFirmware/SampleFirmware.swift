import Crypto
import Diagnostics
import FirmwareImage

/// Deterministic, realistic MakeCode-style board images, made by the project itself.
///
/// Each image has what a MakeCode hex puts in flash (docs/protocols/partial-flashing.md §5):
/// an MBR and SoftDevice stand-in below the application start, a runtime (the DAL/CODAL
/// stand-in) from the application start, zeros up to the program, the program at the
/// page after the runtime's end (pxt always adds a page) starting with the MakeCode
/// magic, the runtime hash and the program hash, a bootloader stand-in, and the UICR
/// bootloader-address word. The same arguments always give the same bytes.
///
/// With two runtimes and three programs the flows can be shown end to end: another
/// runtime needs a full flash, the same runtime with another program a partial flash,
/// the same file nothing.
public enum SampleFirmware {
    /// A runtime build (the C++ part of a MakeCode hex).
    public enum RuntimeID: String, Sendable, CaseIterable {
        case r1, r2
    }

    /// A MakeCode program (the part partial flashing replaces).
    public enum ProgramID: String, Sendable, CaseIterable {
        /// About 5 KiB, like the "small heart" sample.
        case heart
        /// About 8 KiB.
        case counter
        /// About 40 KiB on nRF52833; 20 KiB on nRF51, whose program area is smaller.
        case large
        /// About 128 KiB on nRF52833, where a full update can finish before partial flashing
        /// on any link; on nRF51 it fills the program area (21 KiB).
        case huge

        /// The "number of globals" field at magic+32.
        var globalCount: UInt16 {
            switch self {
            case .heart: return 2
            case .counter: return 5
            case .large: return 41
            case .huge: return 97
            }
        }
    }

    /// Address of the UICR word that names the bootloader start.
    public static let uicrBootloaderAddress: UInt32 = 0x1000_1014

    /// The whole board image.
    public static func image(family: ChipFamily, runtime: RuntimeID, program: ProgramID) -> MemoryImage {
        let layout = family.layout
        let fixed = SampleLayout(family: family)
        let runtimeBytes = self.runtimeBytes(family: family, runtime: runtime)
        let programStart = programAddress(family: family, runtime: runtime)
        let runtimeEnd = layout.applicationStart + UInt32(runtimeBytes.count)
        var segments: [MemoryImage.Segment] = [
            .init(start: 0, bytes: SampleBytes.fill(count: fixed.mbrSize, seed: "mbr-\(family.rawValue)")),
            .init(
                start: 0x1000,
                bytes: SampleBytes.fill(count: Int(fixed.softDeviceEnd - 0x1000), seed: "softdevice-\(family.rawValue)")
            ),
            .init(start: layout.applicationStart, bytes: runtimeBytes),
            // pxt writes zeros from the runtime's end up to the page-aligned program start.
            .init(start: runtimeEnd, bytes: [UInt8](repeating: 0, count: Int(programStart - runtimeEnd))),
            .init(start: programStart, bytes: programBytes(family: family, runtime: runtime, program: program)),
            .init(
                start: layout.bootloaderStart,
                bytes: SampleBytes.fill(count: fixed.bootloaderSize, seed: "bootloader-\(family.rawValue)"))
        ]
        var uicr = LEBytes.bytes(layout.bootloaderStart)
        if family == .nrf52833 { uicr += LEBytes.bytes(UInt32(0x7E000)) }  // MBR parameter page, as CODAL hexes carry
        segments.append(.init(start: uicrBootloaderAddress, bytes: uicr))
        return MemoryImage(segments: segments)
    }

    /// The runtime's bytes, from the application start.
    public static func runtimeBytes(family: ChipFamily, runtime: RuntimeID) -> [UInt8] {
        var bytes = SampleBytes.fill(
            count: runtimeSize(family: family, runtime: runtime), seed: "runtime-\(family.rawValue)-\(runtime.rawValue)"
        )
        bytes.replaceSubrange(0..<vectorTableSize, with: vectorTable(family: family))
        return bytes
    }

    /// The 16 system entries of a Cortex-M vector table, as DAL and CODAL builds start their
    /// runtime with: the stack at the top of RAM (0x20004000 on micro:bit V1's nRF51822, 0x20020000
    /// on nRF52833, as MakeCode hexes set it), then Thumb addresses of handlers in the runtime
    /// (zero for the reserved entries 7-10 and 13).
    static func vectorTable(family: ChipFamily) -> [UInt8] {
        let start = family.layout.applicationStart
        var words: [UInt32] = [family == .nrf51 ? 0x2000_4000 : 0x2002_0000]
        for entry in 1..<16 {
            let reserved = (7...10).contains(entry) || entry == 13
            words.append(reserved ? 0 : start + 0x100 + UInt32(entry) * 0x10 + 1)
        }
        return words.flatMap { LEBytes.bytes($0) }
    }

    static let vectorTableSize = 64

    /// Size of the runtime in bytes: about 170 KiB on nRF52833, 117 KiB on nRF51, so the
    /// programs land where real MakeCode programs do (0x47000/0x48000, 0x35400/0x35C00).
    public static func runtimeSize(family: ChipFamily, runtime: RuntimeID) -> Int {
        switch (family, runtime) {
        case (.nrf52833, .r1): return 0x2A6D0
        case (.nrf52833, .r2): return 0x2B400
        case (.nrf51, .r1): return 0x1D3A0
        case (.nrf51, .r2): return 0x1D9F0
        }
    }

    /// Where the program (and its magic) starts: the page after the runtime's last page.
    public static func programAddress(family: ChipFamily, runtime: RuntimeID) -> UInt32 {
        let end = family.layout.applicationStart + UInt32(runtimeSize(family: family, runtime: runtime))
        return (end & ~(family.pageSize - 1)) + family.pageSize
    }

    /// The 8-byte runtime hash: the first 8 bytes of the runtime's SHA-256.
    public static func runtimeHash(family: ChipFamily, runtime: RuntimeID) -> [UInt8] {
        Array(SHA256.hash(data: runtimeBytes(family: family, runtime: runtime)).prefix(8))
    }

    /// Size of a program in bytes (a multiple of 16).
    public static func programSize(family: ChipFamily, program: ProgramID) -> Int {
        switch program {
        case .heart: return 5152
        case .counter: return 8208
        case .large: return family == .nrf51 ? 20496 : 40976
        case .huge: return family == .nrf51 ? 21520 : 131088
        }
    }

    /// The program region's bytes: magic, runtime hash, program hash, then the program.
    public static func programBytes(family: ChipFamily, runtime: RuntimeID, program: ProgramID) -> [UInt8] {
        let size = programSize(family: family, program: program)
        var bytes = MakeCodeProgram.magic + runtimeHash(family: family, runtime: runtime)
        bytes += placeholderProgramHash
        // +32 number of globals, +34 program size in 8-byte units (pxt `serialize`, `patchHex`).
        bytes += LEBytes.bytes(program.globalCount)
        bytes += LEBytes.bytes(UInt16(size / 8))
        bytes += SampleBytes.fill(
            count: size - bytes.count,
            seed: "program-\(family.rawValue)-\(runtime.rawValue)-\(program.rawValue)")
        // pxt: 4 bytes of the program's SHA-256, each as a little-endian 16-bit word.
        let digest = Array(SHA256.hash(data: bytes))
        bytes.replaceSubrange(24..<32, with: [digest[0], 0, digest[1], 0, digest[2], 0, digest[3], 0])
        return bytes
    }

    /// The 8-byte program hash as stored at magic+24.
    public static func programHash(family: ChipFamily, runtime: RuntimeID, program: ProgramID) -> [UInt8] {
        Array(programBytes(family: family, runtime: runtime, program: program)[24..<32])
    }

    /// pxt's placeholder, replaced by the program hash after assembly.
    static let placeholderProgramHash: [UInt8] = [0x87, 0x32, 0x66, 0x33, 0x0A, 0xF9, 0xDB, 0xDB]
}

/// The sizes of the fixed parts, taken from real MakeCode hexes (§5.4).
struct SampleLayout {
    let mbrSize: Int
    let softDeviceEnd: UInt32
    let bootloaderSize: Int

    init(family: ChipFamily) {
        switch family {
        case .nrf51: mbrSize = 0x7C0; softDeviceEnd = 0x16918; bootloaderSize = 0x3874
        case .nrf52833: mbrSize = 0xB00; softDeviceEnd = 0x1B400; bootloaderSize = 0x63EC
        }
    }
}
