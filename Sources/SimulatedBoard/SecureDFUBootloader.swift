import Crypto
import FirmwareImage
import LinkModel
import NordicDFUFrames
import Transport

/// Nordic Secure DFU on a micro:bit V2 / Calliope mini 3 (docs/protocols/nordic-dfu.md §2, §8).
///
/// In the application: service FE59 with the bonded buttonless characteristic; `01` is
/// answered `20 01 01` and the board resets into the bootloader. In the bootloader
/// ("DfuTarg", same address): the control point and packet characteristics with the V2
/// bootloader's reduced opcode set and object semantics: Create command wipes all progress;
/// the init Execute validates the 56-byte `microbit_app` struct, stores it and invalidates the
/// old application (the settings and their backup are written through the flash queue); data
/// Create rolls back to the last executed object and queues the erase of its pages; each
/// firmware packet queues its flash write, and a packet that finds the flash queue full is
/// dropped silently (`SecureDFUFlashQueue`); packet writes are never answered except by PRN; a
/// data Execute is answered once the flash queue is empty; the final Execute checks the
/// SHA-256 and resets. A disconnect reloads the state from the settings (data offset 0, the stored init);
/// 120 s without progress reset the board.
public struct SecureDFUBootloader: SimulatedService {
    public let uuid = NordicGATT.secureService
    public let characteristics: Set<GATTCharacteristic> = [
        NordicGATT.buttonlessBonded, NordicGATT.secureControlPoint, NordicGATT.securePacket
    ]
    let family: ChipFamily
    var layout: MemoryLayout { family.layout }

    static let commandMax = 512
    static let dataMax = 4096
    static let enterTag = 1, resetTag = 2, inactivityTag = 3, executeTag = 4
    /// From an Abort's answer to the reset (the final Execute's reset follows the settings write
    /// instead: `resetAfterSettingsWrite`).
    static let resetDelay: Duration = .milliseconds(100)
    /// `NRF_BL_RESET_DELAY_MS` (V2 bootloader `sdk_config.h`: 0): `do_reset`'s wait before `NVIC_SystemReset`.
    static let blResetDelay: Duration = .zero

    // RAM state (nrf_dfu_req_handler / nrf_dfu_validation), reloaded from the settings.
    var storedInit: [UInt8]?
    var currentType: UInt8 = 1
    var command: [UInt8] = []
    var commandSize = 0
    var initValid = false
    var firmwareSize = 0
    var hash: [UInt8]?
    var offset = 0
    var crc = CRC32()
    var lastOffset = 0
    var lastCRC = CRC32()
    var objectSize = 0
    var objectReceived = 0
    var prnTarget: UInt16 = 0
    var prnCounter: UInt16 = 0
    /// The flash operations queued in fstorage (survive a disconnect, not a reset).
    var flash = SecureDFUFlashQueue()
    /// A data Execute waits for the flash queue to empty before its answer.
    var executePending = false
    var watchdog = InactivityWatchdog(tag: inactivityTag)

    /// What the bootloader saw (not reset by reboots).
    public internal(set) var statistics = NordicBootloaderStatistics()

    public init(family: ChipFamily) { self.family = family }

    public func isOffered(device: DeviceState) -> Bool { true }

    public func offers(_ characteristic: GATTCharacteristic, device: DeviceState) -> Bool {
        guard characteristics.contains(characteristic) else { return false }
        return (characteristic == NordicGATT.buttonlessBonded) != device.nordic.bootloaderActive
    }

    public mutating func didBoot(device: DeviceState) {
        storedInit = device.nordic.initCommand
        flash.clear()
        reload()
        watchdog.reset()
        prnTarget = 0
        prnCounter = 0
    }

    public mutating func didDisconnect() { reload() }

    /// A page erase silences the radio (`SecureDFUFlashQueue`).
    public func radioSilent(at t: VirtualInstant) -> VirtualInstant? { flash.radioSilent(at: t) }

    /// The RAM state from the settings page (`TRANSPORT_DEACTIVATED` → settings re-init).
    mutating func reload() {
        currentType = 1
        command = storedInit ?? []
        commandSize = command.count
        adopt(storedInit.flatMap { try? MicrobitAppInitPacket(bytes: $0) })
        objectSize = 0
        objectReceived = 0
        executePending = false
    }

    /// Takes `packet` as the init command in force (nil: none) and starts the firmware transfer afresh.
    mutating func adopt(_ packet: MicrobitAppInitPacket?) {
        initValid = packet != nil
        firmwareSize = packet.map { Int($0.applicationSize) } ?? 0
        hash = packet.flatMap { $0.hashSize == 0 ? nil : $0.sha256 }
        offset = 0
        crc = CRC32()
        lastOffset = 0
        lastCRC = CRC32()
    }

    public mutating func didWrite(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
        device: inout DeviceState, effects: inout ServiceEffects
    ) {
        switch characteristic {
        case NordicGATT.buttonlessBonded:
            guard kind == .request else { return }
            if bytes == ButtonlessMessage.enterBootloader.bytes, !effects.linkBonded {
                // The bonded variant hands the peer's bond to the bootloader: without one it
                // refuses (NRF5SDK-CODAL ble_dfu_bonded.c `retrieve_peer_data`, nordic-dfu.md §2.1).
                effects.notify(
                    characteristic, ButtonlessMessage.response(opcode: 0x01, result: ButtonlessMessage.notBonded).bytes)
                effects.note("buttonless DFU: the link is not bonded, 20 01 07")
            } else if bytes == ButtonlessMessage.enterBootloader.bytes {
                effects.notify(
                    characteristic, ButtonlessMessage.response(opcode: 0x01, result: ButtonlessMessage.success).bytes)
                device.nordic.enterOnReset = true
                effects.note("buttonless DFU: entering the bootloader after the indication")
                effects.schedule(after: .milliseconds(20), tag: Self.enterTag)
            } else {
                effects.notify(
                    characteristic,
                    ButtonlessMessage.response(opcode: bytes.first ?? 0, result: ButtonlessMessage.notSupported).bytes)
            }
        case NordicGATT.secureControlPoint:
            // Write Requests only; a Write Command to the control point is ignored.
            guard kind == .request else { return }
            statistics.requests += 1
            if !watchdog.isRunning { touch(effects: &effects) }
            controlPoint(bytes, device: &device, effects: &effects)
        case NordicGATT.securePacket:
            packet(bytes, device: &device, effects: &effects)
        default:
            return
        }
    }

    public mutating func workDone(tag: Int, device: inout DeviceState, effects: inout ServiceEffects) {
        switch tag {
        case Self.enterTag where device.fiberStarved && !device.nordic.bootloaderActive:
            // The indication was confirmed: `ble_dfu_buttonless_bootloader_start_finalize` sets
            // GPREGRET and calls `nrf_pwr_mgmt_shutdown(GOTO_DFU)`, whose CODAL handler
            // (`microbit_ble_shutdown_handler` → `MicroBitBLEManager::prepareForShutdown`) stops
            // advertising, disconnects and refuses until the idle callback continues it
            // (`MicroBitBLEManager::idleCallback`); the idle fiber never runs while a flash
            // operation starves the scheduler (codal-microbit-v2 `source/bluetooth/MicroBitBLEManager.cpp`,
            // codal-microbit-nrf5sdk `ble_dfu.c`, `nrf_pwr_mgmt.c`). The board is silent until a power cycle.
            device.shutdownWaiting = true
            effects.note("buttonless DFU: shutdown waits for the idle fiber, which never runs; disconnecting")
            effects.requestDisconnect()
        case Self.enterTag, Self.resetTag:
            effects.requestReboot()
        case Self.executeTag:
            guard executePending else { return }
            let idle = flash.idle(after: effects.now)
            guard idle <= effects.now else { return effects.schedule(after: idle - effects.now, tag: Self.executeTag) }
            executePending = false
            respond(finishDataExecute(device: &device, effects: &effects), effects: &effects)
        case Self.inactivityTag:
            guard watchdog.fired(effects: &effects) else { return }
            effects.note("Nordic bootloader: 120 s without progress, reset")
            statistics.inactivityResets += 1
            effects.requestReboot()
        default:
            return
        }
    }

    /// Restarts the inactivity timer (DFU started, object received).
    mutating func touch(effects: inout ServiceEffects) { watchdog.touch(effects: &effects) }

    static func failure(_ op: UInt8) -> (SecureDFUResult, UInt8?) -> SecureDFUResponse {
        { result, ext in .failure(opcode: op, result: result.rawValue, extended: ext) }
    }

    mutating func respond(_ r: SecureDFUResponse, effects: inout ServiceEffects) {
        if case .failure = r { statistics.errorsSent += 1 }
        effects.notify(NordicGATT.secureControlPoint, r.bytes)
    }

    private mutating func controlPoint(_ bytes: [UInt8], device: inout DeviceState, effects: inout ServiceEffects) {
        guard let request = try? SecureDFURequest(bytes: bytes) else {
            return respond(
                .failure(opcode: bytes.first ?? 0, result: SecureDFUResult.invalidParameter.rawValue, extended: nil),
                effects: &effects)
        }
        let op = request.opcode
        func fail(_ result: SecureDFUResult, _ ext: UInt8? = nil) {
            respond(.failure(opcode: op, result: result.rawValue, extended: ext), effects: &effects)
        }
        switch request {
        case let .select(type):
            switch type {
            case 1:
                currentType = 1
                respond(
                    .selected(
                        maxSize: UInt32(Self.commandMax), offset: UInt32(command.count), crc: CRC32.checksum(command)),
                    effects: &effects)
            case 2:
                currentType = 2
                respond(
                    .selected(maxSize: UInt32(Self.dataMax), offset: UInt32(offset), crc: crc.value), effects: &effects)
            default:
                currentType = 0
                fail(.invalidObject)
            }
        case let .create(type, size):
            switch type {
            case 1: respond(createCommand(Int(size), effects: &effects), effects: &effects)
            case 2: respond(createData(Int(size), device: &device, effects: &effects), effects: &effects)
            default:
                currentType = 0
                fail(.invalidObject)
            }
        case let .setPRN(n):
            prnTarget = n
            prnCounter = n
            respond(.success(opcode: op), effects: &effects)
        case .calculateChecksum:
            if currentType == 1 {
                respond(.checksum(offset: UInt32(command.count), crc: CRC32.checksum(command)), effects: &effects)
            } else {
                respond(.checksum(offset: UInt32(offset), crc: crc.value), effects: &effects)
            }
        case .execute:
            if currentType == 1 {
                respond(executeCommand(device: &device, effects: &effects), effects: &effects)
            } else if currentType == 2 {
                if let r = executeData(device: &device, effects: &effects) { respond(r, effects: &effects) }
            } else {
                fail(.invalidObject)
            }
        case .abort:
            respond(.success(opcode: op), effects: &effects)
            effects.schedule(after: Self.resetDelay, tag: Self.resetTag)
        case .other:
            // NRF_DFU_PROTOCOL_REDUCED: everything else is "opcode not supported".
            fail(.opcodeNotSupported)
        }
    }
}
