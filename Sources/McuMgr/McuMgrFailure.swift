import Diagnostics
import SMP

/// A failed McuMgr upgrade: what went wrong, and what the board holds now as far as it was
/// read back. The message says both; it claims nothing about the board that was not read.
public struct McuMgrFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, with what to do about it.
    public var cause: McuMgrError
    /// The board's slots after the failure.
    public var board: McuMgrBoardState

    public init(cause: McuMgrError, board: McuMgrBoardState) {
        self.cause = cause
        self.board = board
    }

    public var description: String { "\(cause). \(board)" }
}

extension McuMgrFailure: DomainError {
    public var failureKind: FailureKind { cause.failureKind }
}

/// What the secondary slot holds, as far as the board's slot list and the upload tell.
public enum SecondarySlotContent: String, Sendable, Equatable, Codable {
    /// The board lists the new image there (header and hash TLV readable, hash the new image's).
    case newImage = "new-image"
    /// The board lists no image there, and the upload had given the device part of the new image.
    case partialNewImage = "partial-new-image"
    /// The board lists another image there.
    case otherImage = "other-image"
    /// The board lists no image there, and no part of the new image had reached it.
    case noImage = "no-image"
}

/// The board's MCUboot slots after a failed upgrade.
public struct McuMgrBoardState: Sendable, Equatable, CustomStringConvertible {
    /// Where the slot list comes from.
    public enum Source: Sendable, Equatable {
        /// An image state read sent after the failure.
        case readAfterFailure
        /// The last image state read (or state write answer) before the failure: nothing that
        /// changes the board (an upload chunk, a test, a confirm, a reset) was sent since.
        case lastRead
        /// The slots could not be read, for this reason.
        case notRead(String)
    }

    public var source: Source
    /// The slots as the board reported them (empty when they were not read).
    public var slots: [ImageSlotState]
    /// The image the upgrade was installing (its SHA-256 TLV) and its size.
    public var newImageHash: [UInt8]
    public var imageBytes: Int
    /// The upload offset the device last reported (the bytes it had taken); nil when no upload
    /// chunk was sent.
    public var uploadedBytes: Int?

    public init(source: Source, slots: [ImageSlotState], newImageHash: [UInt8], imageBytes: Int, uploadedBytes: Int?) {
        self.source = source
        self.slots = slots
        self.newImageHash = newImageHash
        self.imageBytes = imageBytes
        self.uploadedBytes = uploadedBytes
    }

    public var wasRead: Bool {
        if case .notRead = source { return false }
        return true
    }

    /// The slots of image 0 (the only updatable image of a single-image board).
    var ownSlots: [ImageSlotState] { slots.filter { ($0.image ?? 0) == 0 } }

    /// What the secondary slot holds; nil when the slots were not read.
    public var secondary: SecondarySlotContent? {
        guard wasRead else { return nil }
        if let listed = ownSlots.first(where: { $0.slot == 1 }) {
            return listed.hash == newImageHash ? .newImage : .otherImage
        }
        if let taken = uploadedBytes, taken > 0, taken < imageBytes { return .partialNewImage }
        return .noImage
    }

    public var description: String {
        let uploaded = uploadedBytes.map { " The device had taken \($0) of the new image's \(imageBytes) bytes." } ?? ""
        switch source {
        case let .notRead(why):
            return "What the board holds now is not known: its slots could not be read back (\(why))." + uploaded
        case .readAfterFailure:
            return "Read back after the failure, the board reports " + slotsText + "." + uploaded
        case .lastRead:
            return "Nothing that changes the board was sent after its last state read, which reported " + slotsText
                + "." + uploaded
        }
    }

    private var slotsText: String {
        let own = ownSlots
        var parts: [String] = []
        for number in 0...1 {
            if let slot = own.first(where: { $0.slot == number }) {
                parts.append("slot \(number): " + describe(slot))
            } else if number == 1, secondary == .partialNewImage {
                parts.append("slot 1: no readable image (a partial copy of the new image)")
            } else {
                parts.append("slot \(number): no readable image")
            }
        }
        return parts.joined(separator: "; ")
    }

    private func describe(_ slot: ImageSlotState) -> String {
        let hash = slot.hash.map { Hex.bytes($0.prefix(8), uppercase: false) + "…" } ?? "no hash"
        let which = slot.hash == newImageHash ? "the new image" : "image"
        var flags: [String] = []
        if slot.active { flags.append("active") }
        flags.append(slot.confirmed ? "confirmed" : "not confirmed")
        if slot.pending { flags.append(slot.permanent ? "pending (permanent)" : "pending (test)") }
        if slot.slot == 1, slot.hash == newImageHash, uploadedBytes == imageBytes { flags.append("complete") }
        return "\(which) \(slot.version) (hash \(hash)), " + flags.joined(separator: ", ")
    }
}
