import Diagnostics
import McuMgr
import SMP

/// The board's MCUboot slots after a failed McuMgr update, as `details.board` of a failed
/// result's reason: what was read back, or why nothing was.
public struct BoardSlotsDetails: Codable, Sendable, Equatable {
    /// One slot as the board reported it.
    public struct Slot: Codable, Sendable, Equatable {
        public var slot: Int
        public var version: String
        /// The image's SHA-256 TLV in hex (nil when the board reported none).
        public var hash: String?
        /// True when the slot holds the image the update was installing.
        public var newImage: Bool
        public var bootable: Bool
        public var pending: Bool
        public var confirmed: Bool
        public var active: Bool
        public var permanent: Bool
    }

    /// `read-after-failure` (an image state read after the failure), `last-read` (the last read
    /// before it: nothing that changes the board was sent since) or `not-read`.
    public var source: String
    /// Why the slots could not be read (`not-read` only).
    public var notReadBecause: String?
    /// The slots the board listed (absent when not read; a slot without a readable image is not listed).
    public var slots: [Slot]?
    /// What the secondary slot holds: `new-image`, `partial-new-image`, `other-image`, `no-image`.
    public var secondary: SecondarySlotContent?
    /// The bytes of the new image the device had taken (its last upload offset), when an upload ran.
    public var uploadedBytes: Int?
    public var imageBytes: Int

    public init(_ state: McuMgrBoardState) {
        switch state.source {
        case .readAfterFailure: source = "read-after-failure"
        case .lastRead: source = "last-read"
        case let .notRead(why):
            source = "not-read"
            notReadBecause = why
        }
        if state.wasRead {
            slots = state.slots.filter { ($0.image ?? 0) == 0 }.map {
                Slot(
                    slot: $0.slot, version: $0.version, hash: $0.hash.map { Hex.bytes($0, uppercase: false) },
                    newImage: $0.hash == state.newImageHash, bootable: $0.bootable, pending: $0.pending,
                    confirmed: $0.confirmed, active: $0.active, permanent: $0.permanent)
            }
        }
        secondary = state.secondary
        uploadedBytes = state.uploadedBytes
        imageBytes = state.imageBytes
    }
}

extension FlashReason {
    /// The details of a flash that failed in a full update over McuMgr: the board's slots.
    static func mcuMgrFailureDetails(_ error: any Error) -> FlashReasonDetails? {
        guard case let .fullUpdateFailed(_, inner)? = error as? FlashError, let failure = inner as? McuMgrFailure else {
            return nil
        }
        return FlashReasonDetails(lastError: "\(failure.cause)", board: BoardSlotsDetails(failure.board))
    }
}
