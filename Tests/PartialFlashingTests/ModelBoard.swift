import FirmwareImage
import PartialFlashingFrames
import Transport
@testable import PartialFlashing

/// A test-only model of the board side of partial flashing (docs/protocols/partial-flashing.md §3),
/// kept small and literal so the flows can be checked against it: packet counters with the
/// "1-7 behind is ignored" rule, `01 AA` on any other mismatch, the block address split over
/// packets 0 and 1, page erase only when a page-start block arrives, burning as a bitwise AND,
/// END_OF_TRANSMISSION re-burning the buffer at the last offset, and REGION_INFO read from
/// flash by scanning page starts for the magic.
struct ModelBoard {
    let family: ChipFamily
    var flash: [UInt8]
    var mode: BoardMode
    /// The runtime's `flashIncomplete` key: set by the first block of a boot, removed by
    /// END_OF_TRANSMISSION; while set, every boot goes to pairing mode.
    var flashIncomplete = false
    private var markedThisBoot = false
    private var packetCount: UInt8 = 0
    private var blockPacketCount: UInt8 = 0
    private var blockNum = 0
    private var offset: UInt32 = 0
    private var buffer = [UInt8](repeating: 0, count: 64)
    /// Protocol rules the client broke (END_OF_TRANSMISSION with nothing written, writes outside flash).
    private(set) var violations: [String] = []
    private(set) var erases = 0
    private(set) var reboots = 0

    init(family: ChipFamily, mode: BoardMode = .pairing) {
        self.family = family
        self.mode = mode
        flash = [UInt8](repeating: 0xFF, count: Int(family.layout.flashSize))
    }

    /// Puts `bytes` into flash as a programmer would.
    mutating func load(_ bytes: [UInt8], at address: UInt32) {
        flash.replaceSubrange(Int(address)..<(Int(address) + bytes.count), with: bytes)
    }

    /// What the board does with one write: its notifications, and whether it reboots.
    mutating func receive(_ bytes: [UInt8]) -> (notifications: [[UInt8]], reboots: Bool) {
        guard let request = try? PartialFlashingRequest(bytes: bytes) else { return ([], false) }
        switch request {
        case .status:
            return ([[0xEE, 0x01, mode.rawValue]], false)
        case let .regionInfo(id):
            packetCount = 0; blockPacketCount = 0; blockNum = 0; offset = 0
            return ([PartialFlashingNotification.regionInfo(regionInfo(id)).bytes], false)
        case let .reset(to):
            mode = to == .pairing ? .pairing : .application
            reboot()
            return ([], true)
        case .endOfTransmission:
            if offset == 0 { violations.append("END_OF_TRANSMISSION with no block written since REGION_INFO") }
            burn()
            flashIncomplete = false
            mode = .application
            reboot()
            return ([], true)
        case let .flashData(field, number, data):
            return (flashData(field: field, number: number, data: data), false)
        }
    }

    /// A reset that keeps flash (power glitch, pairing-mode timeout); `flashIncomplete` sends it to pairing mode.
    mutating func reboot() {
        reboots += 1
        packetCount = 0; blockPacketCount = 0; blockNum = 0; offset = 0
        markedThisBoot = false
        if flashIncomplete { mode = .pairing }
    }

    private mutating func flashData(field: UInt16, number: UInt8, data: [UInt8]) -> [[UInt8]] {
        if number != packetCount {
            let behind = packetCount &- number
            if behind >= 1 && behind < 8 { return [] }
            blockPacketCount &+= 4
            packetCount = blockPacketCount
            blockNum = 0
            return [[0x01, 0xAA]]
        }
        packetCount &+= 1
        buffer.replaceSubrange(blockNum * 16..<(blockNum * 16 + 16), with: data)
        switch blockNum {
        case 0: offset = UInt32(field)
        case 1: offset |= UInt32(field) << 16
        case 3:
            blockNum = 0
            blockPacketCount &+= 4
            if !markedThisBoot { markedThisBoot = true; flashIncomplete = true }
            let page = family.pageSize
            if offset % page == 0 {
                let range = Int(offset)..<Int(offset + page)
                let blank = flash[range].allSatisfy { $0 == 0xFF }
                if family == .nrf51 || !blank {
                    flash.replaceSubrange(range, with: repeatElement(0xFF, count: Int(page)))
                    erases += 1
                }
            }
            burn()
            return [[0x01, 0xFF]]
        default: break
        }
        blockNum += 1
        return []
    }

    private mutating func burn() {
        guard Int(offset) + 64 <= flash.count else { violations.append("burn outside flash at \(offset)"); return }
        for i in 0..<64 { flash[Int(offset) + i] &= buffer[i] }
    }

    private func regionInfo(_ id: UInt8) -> RegionInfo {
        let layout = family.layout
        var magic: UInt32?
        var a = layout.applicationStart
        while a < layout.scratchPage {
            if flash[Int(a)..<Int(a + 16)].elementsEqual(MakeCodeProgram.magic) { magic = a; break }
            a += family.pageSize
        }
        guard let m = magic else { return RegionInfo(id: id, start: 0, end: 0, hash: [UInt8](repeating: 0, count: 8)) }
        switch id {
        case 1:
            return RegionInfo(
                id: 1, start: layout.applicationStart, end: m, hash: Array(flash[Int(m + 16)..<Int(m + 24)]))
        case 2:
            return RegionInfo(id: 2, start: m, end: layout.scratchPage, hash: Array(flash[Int(m + 24)..<Int(m + 32)]))
        default:
            return RegionInfo(id: id, start: 0, end: layout.applicationStart, hash: [UInt8](repeating: 0, count: 8))
        }
    }
}
