import Diagnostics
import PartialFlashingFrames
import Transport

/// The partial-flashing service exactly as CODAL (nRF52833) and DAL (nRF51) implement it
/// (docs/protocols/partial-flashing.md §2, §3), including its traps:
/// - the write handler never checks the length: it reads the 20-byte characteristic value
///   buffer, so a short write reuses stale bytes of earlier writes;
/// - a packet 1…7 behind the expected number is ignored; any other mismatch sends `01 AA`
///   and moves the expected number to the next block start (start + 4);
/// - a lost 4th packet gets no answer;
/// - the 4th packet raises an event; the flash work runs later: it marks `flashIncomplete`
///   in the key-value store (when absent), then reads `offset`, erases, and burns the shared
///   block buffer as it is then, and only then answers `01 FF`; so a client that sends the next
///   block before `01 FF` corrupts the flash; events raised meanwhile wait and run back to back;
/// - a page is erased only for a block at a page start (CODAL: only if not blank; DAL: always);
/// - END_OF_TRANSMISSION burns the buffer again at the last `offset` (at 0 when no block
///   came since REGION_INFO), clears `flashIncomplete` and reboots.
public struct PartialFlashingService: SimulatedService {
    public let uuid = PartialFlashingGATT.service
    public let characteristics: Set<GATTCharacteristic> = [PartialFlashingGATT.characteristic]
    public let runtime: BoardRuntime

    // Per-boot RAM state, named as in the firmware.
    /// The packet number expected next.
    public private(set) var packetCount: UInt8 = 0
    /// The packet number of the current block's first packet.
    public private(set) var blockPacketCount: UInt8 = 0
    /// Position in the current block, 0…3.
    public private(set) var blockNum = 0
    /// The current block's address, assembled from packets 0 and 1.
    public private(set) var offset: UInt32 = 0
    /// The 64-byte block buffer shared by the write handler and the flash work.
    public private(set) var block = [UInt8](repeating: 0, count: 64)
    /// The characteristic's 20-byte value buffer.
    private var value = [UInt8](repeating: 0, count: 20)
    /// True once the flash work hangs on a flash operation that never ends (until a reset).
    public internal(set) var hangs = false

    enum Job: Sendable, Equatable { case flashData, endOfTransmission, restartInPairingMode }
    enum Step: Int { case begin = 1, eraseDone = 2, burnDone = 3, stored = 4 }
    /// The events raised and not yet handled, in order: the message bus queues an event whose
    /// handler is busy (`MESSAGE_BUS_LISTENER_QUEUE_IF_BUSY`) and runs them one after another.
    var jobs: [Job] = []
    var busy = false
    /// The flash work's `flashPointer`: `offset` as the work read it.
    var flashPointer: UInt32 = 0

    public init(runtime: BoardRuntime) { self.runtime = runtime }

    public mutating func didBoot(device: DeviceState) {
        self = PartialFlashingService(runtime: runtime)
    }

    public mutating func didWrite(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
        device: inout DeviceState, effects: inout ServiceEffects
    ) {
        // The stack refuses values longer than the characteristic (20 bytes); the handler needs len > 0.
        guard !bytes.isEmpty, bytes.count <= value.count else {
            effects.note("partial flashing: write of \(bytes.count) bytes ignored")
            return
        }
        value.replaceSubrange(0..<bytes.count, with: bytes)
        switch value[0] {
        case 0x00: regionInfo(device: device, effects: &effects)
        case 0x01: flashData(effects: &effects)
        case 0x02: enqueue(.endOfTransmission, effects: &effects)
        case 0xEE:
            effects.notify(
                PartialFlashingGATT.characteristic,
                PartialFlashingNotification.status(version: 0x01, mode: device.mode).bytes)
        case 0xFF:
            if value[1] == 0x00 {
                enqueue(.restartInPairingMode, effects: &effects)
            } else if value[1] == 0x01 {
                effects.note("partial flashing: FF 01, reset now")
                effects.requestReboot()
            }
        default:
            effects.note("partial flashing: unknown command \(Hex.number(value[0], uppercase: false)) ignored")
        }
    }

    /// REGION_INFO builds a fresh `MicroBitMemoryMap`, whose constructor scans the flash
    /// (`findHashes`): the answer shows the flash as it is now (`DeviceState.memoryMap`).
    private mutating func regionInfo(device: DeviceState, effects: inout ServiceEffects) {
        let id = value[1]
        // Ids above 2 index past the firmware's 3-entry table; the simulation answers zeros.
        let region =
            device.memoryMap.indices.contains(Int(id))
            ? device.memoryMap[Int(id)] : RegionInfo(id: id, start: 0, end: 0, hash: [UInt8](repeating: 0, count: 8))
        var echoed = region
        echoed.id = id
        effects.notify(PartialFlashingGATT.characteristic, PartialFlashingNotification.regionInfo(echoed).bytes)
        packetCount = 0
        blockPacketCount = 0
        blockNum = 0
        offset = 0
    }

    private mutating func flashData(effects: inout ServiceEffects) {
        let packetNum = value[3]
        if packetNum != packetCount {
            let behind = packetCount &- packetNum
            if (1...7).contains(behind) {
                effects.note("partial flashing: packet \(packetNum) ignored (expected \(packetCount))")
                return
            }
            effects.notify(PartialFlashingGATT.characteristic, PartialFlashingNotification.writeFail.bytes)
            blockPacketCount &+= 4
            packetCount = blockPacketCount
            blockNum = 0
            effects.note("partial flashing: packet \(packetNum) out of order, 01 AA, now expecting \(packetCount)")
            return
        }
        packetCount &+= 1
        block.replaceSubrange((16 * blockNum)..<(16 * blockNum + 16), with: value[4..<20])
        switch blockNum {
        case 0:
            offset = UInt32(value[1]) << 8 | UInt32(value[2])
            blockNum = 1
        case 1:
            offset |= UInt32(value[1]) << 24 | UInt32(value[2]) << 16
            blockNum = 2
        case 2:
            blockNum = 3
        default:
            blockNum = 0
            blockPacketCount &+= 4
            enqueue(.flashData, effects: &effects)
        }
    }
}
