import Diagnostics
import FirmwareImage

/// What the policy needs to know besides the file and the board it is planned for.
public struct PlanSettings: Sendable {
    /// Plan for this board instead of the one found (for example a Calliope mini 3 where its name
    /// does not tell); it must be of the found board's chip family.
    public var board: Board?
    /// The MCUboot image a full McuMgr update uploads; nil builds one from the file.
    public var dfuImage: DFUImage?
    /// Flash a file whose only problems may be overridden (a UF2 family ID or an MCUboot header
    /// size of another board), with a warning for each (`--force` on the command line). It never
    /// overrides the checks that keep writes inside the board's application region or slot.
    public var force = false
    /// How messages name the file (the path a user gave); nil: the file's own name.
    public var fileLabel: String?

    public init() {}
}

/// The MCUboot image a full McuMgr update uploads instead of one built from the file.
public struct DFUImage: Sendable, Equatable {
    public var image: MCUbootImage
    /// Where the image lies in the hex it came from (its load address is then fixed), or nil.
    public var address: UInt32?
    /// How messages name its file.
    public var label: String

    public init(image: MCUbootImage, address: UInt32? = nil, label: String) {
        self.image = image
        self.address = address
        self.label = label
    }

    /// The MCUboot image `firmware` holds: the file itself, or one found in its first section.
    /// - Throws: `FlashRefusal(.notAnMCUbootImage)` when it holds none.
    public static func from(_ firmware: Firmware, label: String) throws -> DFUImage {
        if let image = firmware.mcuboot { return DFUImage(image: image, label: label) }
        if let section = firmware.sections.first, let found = try? MCUbootImage.locate(in: section.image) {
            return DFUImage(image: found.image, address: found.address, label: label)
        }
        throw FlashRefusal(
            .notAnMCUbootImage,
            "\(label): holds no MCUboot image (a \(firmware.format.displayName)); give an MCUboot image or a DFU "
                + ".zip with one, or leave out --dfu-image to build one from the file")
    }
}

/// bitflash's policy for a file and a board: whether it may be flashed at all, and the plan when
/// it may. One place decides for every front door (the command line, `BlueZFlasher`, the
/// simulated boards, `watch`, class sets), so a file one refuses, all refuse, in the same words.
///
/// In order: the board asked for must be of the found board's chip family; the file must be for
/// the board (`Firmware.problems(for:)` and those of `PlanSettings.dfuImage`; `force` lets
/// only overridable problems through); no MCUboot image may be damaged; the board's chip must have
/// an image in the file; and one of the paths must be able to write something.
public enum FlashPolicy {
    /// The plan for `firmware` on `found` (or on `settings.board`).
    /// - Parameters:
    ///   - described: how messages name the board (`simulated micro:bit V2`, `BBC micro:bit [zotig]`).
    ///   - warn: receives one sentence per problem `force` let through.
    /// - Throws: `FlashRefusal`.
    public static func plan(
        _ firmware: Firmware, for found: Board, described: String, settings: PlanSettings,
        warn: (String) -> Void = { _ in }
    ) throws -> FlashPlan {
        let label = settings.fileLabel ?? firmware.fileName
        var target = found
        if let asked = settings.board {
            guard asked.family == found.family else {
                throw FlashRefusal(
                    .boardMismatch,
                    "the board asked for, a \(asked.displayName) (\(asked.family.chipName)), does not match the "
                        + "\(described) (\(found.family.chipName))")
            }
            target = asked
        }
        try checkFits(firmware, board: target, settings: settings, warn: warn)
        try requireIntactImages(firmware, settings: settings)
        let plan: FlashPlan
        do {
            plan = try FlashPlan.make(firmware: firmware, board: target, dfuImage: settings.dfuImage?.image)
        } catch let error as FirmwareImageError {
            // A reader's message that names the file starts with its name: the label replaces it.
            let named =
                error.message.hasPrefix(firmware.fileName + " ")
                ? label + error.message.dropFirst(firmware.fileName.count) : "\(label): \(error.message)"
            throw FlashRefusal(
                .noImageForBoard,
                named
                    + (error.message.contains("board is a ")
                        ? "" : "; the board is a \(target.displayName) (\(target.family.chipName))"))
        }
        try requireSomethingToWrite(plan, board: target, label: label)
        return plan
    }

    /// Refuses a file that cannot be for `board` (`Firmware.problems(for:)`, and those of the
    /// `settings.dfuImage`), unless `settings.force` is set and every problem may be overridden;
    /// then `warn` gets each.
    public static func checkFits(
        _ firmware: Firmware, board: Board, settings: PlanSettings, warn: (String) -> Void = { _ in }
    ) throws {
        let label = settings.fileLabel ?? firmware.fileName
        var problems = firmware.problems(for: board).map { (label, $0) }
        if let dfu = settings.dfuImage {
            problems += dfu.image.problems(for: board, address: dfu.address).map { (dfu.label, $0) }
        }
        guard !problems.isEmpty else { return }
        let fixed = problems.filter { !$0.1.overridable }
        if settings.force, fixed.isEmpty {
            for (path, problem) in problems { warn("\(path): flashing it anyway (--force): \(problem.message)") }
            return
        }
        let files = Set(problems.map(\.0))
        let subject =
            files.count == 1 ? "\(files.first!) is not" : "\(files.sorted().joined(separator: " and ")) are not"
        let reasons = problems.map { files.count == 1 ? $0.1.message : "\($0.0): \($0.1.message)" }
            .joined(separator: "; ")
        let advice =
            fixed.isEmpty
            ? " (--force flashes it anyway)"
            : (fixed.count < problems.count
                ? " (--force does not override "
                    + "\(Array(Set(fixed.map(\.1.kind.checkName))).sorted().joined(separator: " or ")))"
                : "")
        throw FlashRefusal(
            .notForBoard, "\(subject) for a \(board.displayName): \(reasons)\(advice)",
            problems: problems.map(\.1), overridable: fixed.isEmpty)
    }

    /// Refuses an MCUboot image (the file, or `settings.dfuImage`) whose hash TLV does not match
    /// its bytes: it was damaged after it was built, the board's MCUboot would refuse to boot it,
    /// and nothing can make it whole, so `force` does not override it.
    public static func requireIntactImages(_ firmware: Firmware, settings: PlanSettings) throws {
        let label = settings.fileLabel ?? firmware.fileName
        for (path, image) in [(label, firmware.mcuboot), (settings.dfuImage?.label, settings.dfuImage?.image)] {
            guard let path, let image, case let .mismatch(stored, computed) = image.hashCheck else { continue }
            throw FlashRefusal(
                .damagedImage,
                "\(path): the MCUboot image is damaged: its hash TLV says "
                    + "\(Hex.bytes(Array(stored.prefix(8)), uppercase: false))…, its bytes hash to "
                    + "\(Hex.bytes(Array(computed.prefix(8)), uppercase: false))…; the board would not boot it. "
                    + "Build or download it again (nothing was sent)")
        }
    }

    /// Refuses a plan no path can carry out: no MakeCode program for partial flashing and no
    /// application for a full update (McuMgr or Nordic DFU), as `bitflash plan` finds no estimate.
    public static func requireSomethingToWrite(_ plan: FlashPlan, board: Board, label: String) throws {
        guard BoardlessPlan.make(plan, board: board).byProfile.first?.estimates.isEmpty ?? true else { return }
        throw FlashRefusal(
            .nothingToWrite,
            "\(label): neither path can write this file to a \(board.displayName): "
                + "it holds no MakeCode program and no application image could be made from it")
    }
}
