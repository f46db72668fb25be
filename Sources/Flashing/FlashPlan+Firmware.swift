import Crypto
import FirmwareImage
import McuMgr

extension FlashPlan {
    /// The plan for flashing `firmware` onto a `board`: the board family's image and
    /// MakeCode program, and the MCUboot image a full update would upload.
    ///
    /// The full image is, in order of preference: `dfuImage` (the user's `--dfu-image`),
    /// the file itself when it is an MCUboot image or package, or an unsigned MCUboot image
    /// built from the board's application region (header of one flash page, SHA-256 TLV),
    /// whose payload lands at the application start.
    public static func make(firmware: Firmware, board: Board, dfuImage: MCUbootImage? = nil) throws -> FlashPlan {
        let family = board.family
        // An MCUboot image's body is what MCUboot runs from the application start, so that is
        // where `image(for:)` puts its program (and where a read-back finds it).
        let image = try firmware.image(for: board)
        let program = MakeCodeProgram.find(in: image, family: family)
        let full: MCUbootImage?
        if let dfuImage {
            full = dfuImage
        } else if let own = firmware.mcuboot {
            full = own
        } else {
            full = try applicationImage(of: image, family: family)
        }
        var plan = FlashPlan(family: family, image: image, program: program, fullImage: full.map(upgradeImage))
        plan.fullImageHoldsTheProgram = dfuImage == nil
        return plan
    }

    /// The unsigned MCUboot image of the application region of `image` (nil when it holds no
    /// application): from the application start to its last data byte, rounded up to a multiple of
    /// 4 with 0xFF as the Nordic DFU clients cut it (docs/protocols/nordic-dfu.md §4), so that a hex and a DFU zip
    /// made from it give the same image.
    public static func applicationImage(of image: MemoryImage, family: ChipFamily) throws -> MCUbootImage? {
        let layout = family.layout
        let app = image.slice(layout.applicationStart..<layout.scratchPage)
        guard let last = app.span?.upperBound else { return nil }
        let end = min(layout.applicationStart + ((last - layout.applicationStart + 3) & ~3), layout.scratchPage)
        let bytes = try MCUbootImage.build(
            application: image.read(layout.applicationStart..<end),
            version: MCUbootVersion(major: 1), headerSize: UInt16(layout.pageSize))
        return try MCUbootImage(bytes: bytes)
    }

    /// What the McuMgr upgrade needs of an MCUboot image.
    public static func upgradeImage(_ image: MCUbootImage) -> McuMgrUpgradeImage {
        McuMgrUpgradeImage(
            bytes: image.bytes, hash: image.reportedHash ?? [],
            fileSHA256: Array(SHA256.hash(data: image.bytes)))
    }
}
