import FirmwareImage
import PartialFlashingFrames

/// What a board told about itself: STATUS plus REGION_INFO 1 and 2.
public struct BoardMemoryMap: Sendable, Equatable {
    /// The partial-flashing protocol version from STATUS (1 on every known firmware).
    public var protocolVersion: UInt8
    /// The mode the board was in when its regions were read.
    public var mode: BoardMode
    /// Region 1: the DAL/CODAL runtime. Its hash identifies the runtime build.
    public var runtime: RegionInfo
    /// Region 2: the MakeCode program. Its start is the program's magic, its hash the program's.
    public var program: RegionInfo

    public init(protocolVersion: UInt8, mode: BoardMode, runtime: RegionInfo, program: RegionInfo) {
        self.protocolVersion = protocolVersion
        self.mode = mode
        self.runtime = runtime
        self.program = program
    }

    /// True when the board reports a MakeCode program: a non-empty program region and
    /// non-zero hashes. CODAL reports all zeros and DAL zero hashes when it found no program.
    public var hasProgram: Bool {
        !program.isEmpty && !program.hasZeroHash && !runtime.hasZeroHash
    }
}

extension RegionInfo {
    /// Start and end both zero: the board reported nothing for this region.
    public var isEmpty: Bool { start == 0 && end == 0 }
    /// The hash is missing or all zeros.
    public var hasZeroHash: Bool { hash.count != 8 || hash.allSatisfy { $0 == 0 } }

    /// Checks that a region a board reported can exist on `layout`.
    /// An empty region (all zero) is valid: it means "nothing there".
    public func validate(against layout: MemoryLayout?) throws(PartialFlashError) {
        if isEmpty { return }
        if start == 0 { throw .invalidRegion(self, .zeroStart) }
        if end <= start { throw .invalidRegion(self, .endBeforeStart) }
        guard let layout else { return }
        if end > layout.flashSize { throw .invalidRegion(self, .outsideFlash(layout.flash)) }
        if start < layout.applicationStart || end > layout.applicationEnd {
            throw .invalidRegion(self, .outsideApplication(layout.application))
        }
    }
}

extension ChipFamily {
    /// The family whose runtime region starts at `address` (0x18000 DAL, 0x1C000 CODAL).
    static func withRuntimeStart(_ address: UInt32) -> ChipFamily? {
        ChipFamily.allCases.first { $0.layout.applicationStart == address }
    }
}
