import FirmwareImage
import McuMgr
import NordicDFU
import PartialFlashing
import PartialFlashingFrames
import Transport

/// Which path a flash may take.
public enum FlashMode: String, Sendable, Equatable, Codable, CaseIterable {
    /// Partial flashing when the board can take it, a full update otherwise or when it fails.
    case auto
    /// Partial flashing only; fail rather than replace the whole application.
    case partial
    /// A full update only (McuMgr or Nordic DFU, whichever the board has), even when partial flashing would do.
    case full
}

/// The protocols of a full update.
public enum FullUpdatePath: String, Sendable, Equatable, Codable, CaseIterable {
    /// McuMgr (SMP) image upload to an MCUboot bootloader.
    case mcumgr
    /// Nordic DFU: Secure DFU (micro:bit V2, Calliope mini 3) or legacy DFU (micro:bit V1, Calliope mini 1/2).
    case nordic
}

/// Everything a flash needs to know besides the board.
public struct FlashOptions: Sendable, Equatable {
    /// Which paths the flash may take.
    public var mode: FlashMode
    /// Timeouts, retries and limits of partial flashing.
    public var partial: PartialFlashSettings
    /// How a full McuMgr update runs (upgrade mode, chunking, swap time, trace bytes).
    public var mcumgr: McuMgrUpgradeOptions
    /// With `mode == .auto`: take this kind of path whenever it is possible, instead of the
    /// one with the lowest estimate (`--prefer`).
    public var prefer: PathPreference?
    /// Read the memory map, decide and finish without writing anything (`--dry-run`).
    public var dryRun = false
    /// The full-update path to use; nil: McuMgr when the board offers SMP, otherwise Nordic DFU.
    public var fullPath: FullUpdatePath? = nil
    /// How a Nordic DFU runs (receipts, waits, retries).
    public var nordic = NordicDFUOptions()
    /// How reasons and errors name these options when they say what to change.
    public var optionNames = OptionNames.neutral

    /// The partial-flashing settings default to `PartialFlashSettings()`, the same on BlueZ and
    /// on the link model: none of them depends on the link's timing.
    public init(
        mode: FlashMode = .auto, partial: PartialFlashSettings = PartialFlashSettings(),
        mcumgr: McuMgrUpgradeOptions = McuMgrUpgradeOptions()
    ) {
        self.mode = mode
        self.partial = partial
        self.mcumgr = mcumgr
    }
}

/// How reasons and errors name the options a user set when they say what was asked for or
/// what to change. The library's wording is neutral; a front end names its own controls (the
/// command line gives its flags: `--mode `, `--full-path `, `--dfu-image FILE`).
public struct OptionNames: Sendable, Equatable {
    /// Put before a `FlashMode`: "mode " makes "mode full".
    public var mode: String
    /// Put before a `FullUpdatePath`: "full-update path " makes "full-update path nordic".
    public var fullPath: String
    /// How to give the image a full update uploads.
    public var fullImage: String

    public init(mode: String, fullPath: String, fullImage: String) {
        self.mode = mode
        self.fullPath = fullPath
        self.fullImage = fullImage
    }

    /// The library's words: the options as `FlashOptions` and `FlashPlan` call them.
    public static let neutral = OptionNames(
        mode: "mode ", fullPath: "full-update path ",
        fullImage: "an MCUboot image (FlashPlan's dfuImage)")

    /// `mode` with its value: "mode full".
    public func mode(_ value: FlashMode) -> String { mode + value.rawValue }
    /// The full-update path with its value: "full-update path nordic".
    public func fullPath(_ value: FullUpdatePath) -> String { fullPath + value.rawValue }
    /// The full-update path option alone: "full-update path".
    public var fullPathOption: String { fullPath.trimmingSuffixSpaces }
}

extension String {
    fileprivate var trimmingSuffixSpaces: String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}

/// What to write to one board: that board family's image, its MakeCode program (if it has
/// one) and the MCUboot image a full update uploads (if one can be made).
///
/// Make one with `FlashPlan.make(firmware:board:dfuImage:)` from a parsed `Firmware`.
public struct FlashPlan: Sendable, Equatable {
    /// The chip family of the board this plan is for.
    public var family: ChipFamily
    /// The board family's whole image from the file.
    public var image: MemoryImage
    /// The MakeCode program partial flashing can send; nil when the file has none.
    public var program: MakeCodeProgram?
    /// The MCUboot image a full update uploads; nil when none can be made.
    public var fullImage: McuMgrUpgradeImage?
    /// The full image was made from the file, so after a McuMgr update the board runs the file's
    /// program (false for an image the user gave with `--dfu-image`).
    public var fullImageHoldsTheProgram = true
    /// Where an earlier, interrupted partial flash of this program to this board stopped
    /// (saved from its `FlowReport.checkpoint`s); nil to start from the beginning.
    public var resume: ResumePoint?
    /// This computer's record of the program it last finished on this board
    /// (`ResumeRecordStore.loadFinish`); nil when there is none, and every up-to-date board is
    /// then confirmed by a restart into its program.
    public var finished: FinishRecord?

    public init(family: ChipFamily, image: MemoryImage, program: MakeCodeProgram?, fullImage: McuMgrUpgradeImage?) {
        self.family = family
        self.image = image
        self.program = program
        self.fullImage = fullImage
    }
}
