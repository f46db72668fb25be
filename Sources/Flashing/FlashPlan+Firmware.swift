import Crypto
import Diagnostics
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
        let image: MemoryImage
        if firmware.mcuboot != nil, firmware.sections.count == 1, firmware.sections[0].family == nil {
            image = firmware.sections[0].image // an MCUboot image: nothing for partial flashing
        } else {
            image = try firmware.image(for: board)
        }
        let program = MakeCodeProgram.find(in: image, family: family)
        let full: MCUbootImage?
        if let dfuImage {
            full = dfuImage
        } else if let own = firmware.mcuboot {
            full = own
        } else if let built = try applicationImage(of: image, family: family) {
            // One that does not fit the primary slot is refused by the device after the
            // connection (IMAGE_TOO_LARGE, mcumgr-smp.md §3.1): no McuMgr path is offered.
            let slot = family.layout.mcubootPrimarySlot
            guard built.length <= slot.count else {
                var plan = FlashPlan(family: family, image: image, program: program, fullImage: nil)
                plan.fullImageProblem = "the MCUboot image made from it would be \(grouped(built.length)) bytes with its header and TLVs, "
                    + "and the primary slot (\(Hex.address(slot.lowerBound))-\(Hex.address(slot.upperBound))) holds \(grouped(slot.count))"
                return plan
            }
            full = built
        } else {
            full = nil
        }
        return FlashPlan(family: family, image: image, program: program, fullImage: full.map(upgradeImage))
    }

    /// `360,488`.
    private static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (k, c) in digits.enumerated() {
            if k > 0, (digits.count - k) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }

    /// The unsigned MCUboot image of the application region of `image` (nil when it holds no
    /// application): from the application start to its last data byte, rounded up to a multiple of
    /// 4 with 0xFF as the Nordic DFU clients cut it (nordic-dfu.md §4), so that a hex and a DFU zip
    /// made from it give the same image.
    public static func applicationImage(of image: MemoryImage, family: ChipFamily) throws -> MCUbootImage? {
        let layout = family.layout
        let app = image.slice(layout.applicationStart..<layout.scratchPage)
        guard let last = app.span?.upperBound else { return nil }
        let end = min(layout.applicationStart + ((last - layout.applicationStart + 3) & ~3), layout.scratchPage)
        let bytes = try MCUbootImage.build(application: image.read(layout.applicationStart..<end),
                                           version: MCUbootVersion(major: 1), headerSize: UInt16(layout.pageSize))
        return try MCUbootImage(bytes: bytes)
    }

    /// What the McuMgr upgrade needs of an MCUboot image.
    public static func upgradeImage(_ image: MCUbootImage) -> McuMgrUpgradeImage {
        McuMgrUpgradeImage(bytes: image.bytes, hash: image.reportedHash ?? [],
                           fileSHA256: Array(SHA256.hash(data: image.bytes)))
    }
}
