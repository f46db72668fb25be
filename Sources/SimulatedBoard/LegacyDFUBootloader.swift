import FirmwareImage
import LinkModel
import NordicDFUFrames
import Transport

/// The micro:bit DFU control service of a DAL application (micro:bit V1, Calliope mini 1/2):
/// writing `01` makes the runtime drop the link and reset into the legacy bootloader
/// (docs/protocols/nordic-dfu.md §3.1). It reads `00`.
public struct DFUControlService: SimulatedService {
    public let uuid = NordicGATT.dfuControlService
    public let characteristics: Set<GATTCharacteristic> = [NordicGATT.dfuControl]

    public init() {}

    public mutating func didBoot(device: DeviceState) {}

    public mutating func didWrite(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
        device: inout DeviceState, effects: inout ServiceEffects
    ) {
        guard bytes.first == 0x01 else { return }
        device.nordic.enterOnReset = true
        effects.note("DFU control: 01, the runtime disconnects and resets into the bootloader")
        effects.requestReboot()
    }

    public mutating func workDone(tag: Int, device: inout DeviceState, effects: inout ServiceEffects) {}
}

/// The nRF51 legacy bootloader (SDK 8, DFU revision 0.4) as micro:bit V1 and Calliope mini 1/2
/// ship it (docs/protocols/nordic-dfu.md §3, §8): Start DFU with the 12-byte size packet erases the
/// application and marks it invalid before answering; the init packet (padded per write to
/// 4 bytes) is checked for the device type and SoftDevice; firmware packets must be multiples
/// of 4 and are counted for receipts; Validate compares the CRC-16 of the received image
/// with the init packet's; Activate starts it. No resume: a second Start in the same session
/// is refused with "invalid state" until a reset; 120 s without activity reset the board.
public struct LegacyDFUBootloader: SimulatedService {
    public let uuid = NordicGATT.legacyService
    public let characteristics: Set<GATTCharacteristic> = [
        NordicGATT.legacyControlPoint, NordicGATT.legacyPacket, NordicGATT.legacyRevision
    ]
    let family: ChipFamily
    var layout: MemoryLayout { family.layout }

    enum Phase: Sendable, Equatable {
        case idle, awaitingSizes, erasing, started, initReceiving, initDone, receiving, complete, validated, failed
    }

    static let eraseTag = 1, resetTag = 2, inactivityTag = 3

    var phase: Phase = .idle
    var applicationSize = 0
    var initBuffer: [UInt8] = []
    var initPacket: LegacyInitPacket?
    var received = 0
    var prnTarget: UInt16 = 0
    var prnCounter: UInt16 = 0
    var watchdog = InactivityWatchdog(tag: inactivityTag)

    public internal(set) var statistics = NordicBootloaderStatistics()

    public init(family: ChipFamily) { self.family = family }

    public func isOffered(device: DeviceState) -> Bool { device.nordic.bootloaderActive }

    public mutating func didBoot(device: DeviceState) {
        let stats = statistics
        self = LegacyDFUBootloader(family: family)
        statistics = stats
    }

    public mutating func didWrite(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
        device: inout DeviceState, effects: inout ServiceEffects
    ) {
        switch characteristic {
        case NordicGATT.legacyControlPoint:
            guard kind == .request else { return }
            statistics.requests += 1
            controlPoint(bytes, device: &device, effects: &effects)
        case NordicGATT.legacyPacket:
            statistics.packets += 1
            packet(bytes, device: &device, effects: &effects)
        default:
            return
        }
    }

    public mutating func workDone(tag: Int, device: inout DeviceState, effects: inout ServiceEffects) {
        switch tag {
        case Self.eraseTag:
            guard phase == .erasing else { return }
            phase = .started
            respond(0x01, .success, effects: &effects)
        case Self.resetTag:
            effects.requestReboot()
        case Self.inactivityTag:
            guard watchdog.fired(effects: &effects) else { return }
            statistics.inactivityResets += 1
            effects.note("legacy bootloader: 120 s without activity, reset")
            effects.requestReboot()
        default:
            return
        }
    }

    mutating func touch(effects: inout ServiceEffects) { watchdog.touch(effects: &effects) }

    private mutating func respond(_ op: UInt8, _ status: LegacyDFUStatus, effects: inout ServiceEffects) {
        if status != .success { statistics.errorsSent += 1 }
        effects.notify(
            NordicGATT.legacyControlPoint, LegacyDFUNotification.response(opcode: op, status: status.rawValue).bytes)
    }

    private mutating func controlPoint(_ bytes: [UInt8], device: inout DeviceState, effects: inout ServiceEffects) {
        guard let request = try? LegacyDFURequest(bytes: bytes) else {
            // A too-short Start or Init answers "operation failed", a too-short PRN request "not supported".
            let op = bytes.first ?? 0
            return respond(op, op == 0x08 ? .notSupported : .operationFailed, effects: &effects)
        }
        switch request {
        case let .start(mode):
            guard phase == .idle else { return respond(0x01, .invalidState, effects: &effects) }
            guard mode == LegacyDFURequest.applicationMode else {
                return respond(0x01, .notSupported, effects: &effects)
            }
            phase = .awaitingSizes
            touch(effects: &effects)
        case let .initParameters(complete):
            if !complete {
                guard phase == .started || phase == .initDone else {
                    return respond(0x02, .invalidState, effects: &effects)
                }
                phase = .initReceiving
                initBuffer = []
                return
            }
            guard phase == .initReceiving else { return respond(0x02, .invalidState, effects: &effects) }
            touch(effects: &effects)
            guard initBuffer.count >= LegacyInitPacket.size,
                let packet = try? LegacyInitPacket(bytes: Array(initBuffer.prefix(LegacyInitPacket.size))),
                packet.deviceType == 0xFFFF, packet.deviceRevision == 0xFFFF,
                packet.softDevice == LegacyInitPacket.s110v8 || packet.softDevice == LegacyInitPacket.anySoftDevice
            else {
                phase = .started
                return respond(0x02, .operationFailed, effects: &effects)
            }
            initPacket = packet
            phase = .initDone
            respond(0x02, .success, effects: &effects)
        case let .packetReceiptRequest(n):
            prnTarget = n
            prnCounter = n
        case .receiveFirmware:
            guard phase == .initDone else { return respond(0x03, .invalidState, effects: &effects) }
            phase = .receiving
            received = 0
            prnCounter = prnTarget
        case .validate:
            guard phase == .complete, let packet = initPacket else {
                return respond(0x04, .invalidState, effects: &effects)
            }
            touch(effects: &effects)
            let start = layout.applicationStart
            let image = (try? device.flash.read(start..<(start + UInt32(applicationSize)))) ?? []
            guard CRC16.ccittFalse(image) == packet.crc16 else {
                statistics.hashFailures += 1
                phase = .failed
                return respond(0x04, .crcError, effects: &effects)
            }
            phase = .validated
            respond(0x04, .success, effects: &effects)
        case .activateAndReset:
            guard phase == .validated else { return respond(0x05, .invalidState, effects: &effects) }
            let start = layout.applicationStart
            let image = (try? device.flash.read(start..<(start + UInt32(applicationSize)))) ?? []
            device.nordic.applicationValid = true
            device.nordicApplicationReplaced(start: start, bytes: image)
            statistics.completedUpdates += 1
            effects.note("legacy bootloader: image of \(applicationSize) bytes activated")
            effects.schedule(after: .milliseconds(100), tag: Self.resetTag)
        case .reset:
            effects.schedule(after: .milliseconds(100), tag: Self.resetTag)
        case .reportSize:
            effects.notify(NordicGATT.legacyControlPoint, LegacyDFUNotification.imageSize(UInt32(received)).bytes)
        case let .other(op, _):
            respond(op, .notSupported, effects: &effects)
        }
    }

    private mutating func packet(_ bytes: [UInt8], device: inout DeviceState, effects: inout ServiceEffects) {
        switch phase {
        case .awaitingSizes:
            guard let sizes = try? LegacyImageSizes(bytes: bytes), sizes.softDevice == 0, sizes.bootloader == 0,
                sizes.application % 4 == 0, sizes.application > 0
            else {
                phase = .idle
                return respond(0x01, .notSupported, effects: &effects)
            }
            guard Int(sizes.application) <= DFUApplication.maximumSize(for: family) else {
                phase = .idle
                return respond(0x01, .dataSize, effects: &effects)
            }
            applicationSize = Int(sizes.application)
            // The application is marked invalid, then erased; the answer waits for the erase.
            device.nordic.applicationValid = false
            let start = layout.applicationStart
            var page = start
            var time: Duration = .zero
            while page < start + UInt32(applicationSize) {
                try? device.flash.erasePage(at: page)
                time += effects.pageEraseDuration()
                page += layout.pageSize
                statistics.pageErases += 1
            }
            phase = .erasing
            effects.schedule(after: time, tag: Self.eraseTag)
        case .initReceiving:
            var padded = bytes
            while padded.count % 4 != 0 { padded.append(0) }
            if initBuffer.count + padded.count <= 64 { initBuffer += padded }
        case .receiving:
            touch(effects: &effects)
            guard bytes.count % 4 == 0 else { return respond(0x03, .notSupported, effects: &effects) }
            guard received + bytes.count <= applicationSize else {
                phase = .failed
                return respond(0x03, .dataSize, effects: &effects)
            }
            do {
                try device.flash.writeWords(bytes, at: layout.applicationStart + UInt32(received))
            } catch {
                statistics.silentErrors += 1
            }
            received += bytes.count
            if received == applicationSize {
                phase = .complete
                respond(0x03, .success, effects: &effects)
                return
            }
            guard prnTarget > 0 else { return }
            prnCounter = prnCounter > 0 ? prnCounter - 1 : 0
            if prnCounter == 0 {
                prnCounter = prnTarget
                effects.notify(
                    NordicGATT.legacyControlPoint, LegacyDFUNotification.receipt(bytesReceived: UInt32(received)).bytes)
            }
        default:
            statistics.silentErrors += 1
        }
    }
}
