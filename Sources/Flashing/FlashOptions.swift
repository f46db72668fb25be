import FirmwareImage
import McuMgr
import PartialFlashing

/// Which path a flash may take.
public enum FlashMode: String, Sendable, Equatable, Codable, CaseIterable {
    /// Partial flashing when the board can take it, a full update otherwise or when it fails.
    case auto
    /// Partial flashing only; fail rather than replace the whole application.
    case partial
    /// A full update only (McuMgr), even when partial flashing would do.
    case full
}

/// Everything a flash needs to know besides the board.
public struct FlashOptions: Sendable, Equatable {
    public var mode: FlashMode
    public var partial: PartialFlashSettings
    public var mcumgr: McuMgrUpgradeOptions

    /// The partial-flashing settings default to `PartialFlashSettings.overALink`: sessions run
    /// over BlueZ or the link model, where an answer takes at least one connection event.
    public init(mode: FlashMode = .auto, partial: PartialFlashSettings = .overALink,
                mcumgr: McuMgrUpgradeOptions = McuMgrUpgradeOptions()) {
        self.mode = mode
        self.partial = partial
        self.mcumgr = mcumgr
    }
}

/// What to write to one board: that board family's image, its MakeCode program (if it has
/// one) and the MCUboot image a full update uploads (if one can be made).
public struct FlashPlan: Sendable, Equatable {
    public var family: ChipFamily
    public var image: MemoryImage
    public var program: MakeCodeProgram?
    public var fullImage: McuMgrUpgradeImage?

    public init(family: ChipFamily, image: MemoryImage, program: MakeCodeProgram?, fullImage: McuMgrUpgradeImage?) {
        self.family = family
        self.image = image
        self.program = program
        self.fullImage = fullImage
    }
}
