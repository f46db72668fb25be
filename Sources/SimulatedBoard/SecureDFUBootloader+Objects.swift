import Crypto
import FirmwareImage
import LinkModel
import NordicDFUFrames
import Transport

/// The secure bootloader's objects: Create, Execute and packet writes (docs/protocols/nordic-dfu.md §2.4).
extension SecureDFUBootloader {
    mutating func createCommand(_ size: Int, effects: inout ServiceEffects) -> SecureDFUResponse {
        let fail = Self.failure(0x01)
        currentType = 1
        guard size > 0 else { return fail(.invalidParameter, nil) }
        guard size <= Self.commandMax else { return fail(.insufficientResources, nil) }
        // All progress is wiped; the settings keep the stored init until the next Execute.
        command = []
        commandSize = size
        initValid = false
        firmwareSize = 0
        offset = 0
        crc = CRC32()
        lastOffset = 0
        lastCRC = CRC32()
        objectSize = 0
        objectReceived = 0
        prnCounter = prnTarget
        touch(effects: &effects)
        return .success(opcode: 0x01)
    }

    mutating func createData(_ size: Int, device: inout DeviceState, effects: inout ServiceEffects) -> SecureDFUResponse
    {
        let fail = Self.failure(0x01)
        currentType = 2
        guard initValid else { return fail(.operationNotPermitted, nil) }
        guard size > 0 else { return fail(.invalidParameter, nil) }
        guard size <= Self.dataMax else { return fail(.insufficientResources, nil) }
        guard lastOffset + size <= firmwareSize else { return fail(.operationNotPermitted, nil) }
        guard size % Self.dataMax == 0 || lastOffset + size == firmwareSize else { return fail(.invalidParameter, nil) }
        // The erase of the object's pages is one fstorage operation, queued behind any flash
        // work still pending; the response goes out at once (`on_data_obj_create_request`).
        let start = layout.applicationStart + UInt32(lastOffset)
        var page = start & ~(layout.pageSize - 1)
        var pages = 0
        var eraseTime: Duration = .zero
        while page < start + UInt32(size) {
            eraseTime += effects.pageEraseDuration()
            page += layout.pageSize
            pages += 1
        }
        offset = lastOffset
        crc = lastCRC
        objectSize = size
        objectReceived = 0
        guard flash.enqueue(eraseTime, silencesRadio: true, at: effects.now) != nil else {
            return fail(.invalidObject, nil)  // "Erase operation failed"
        }
        prnCounter = prnTarget
        page = start & ~(layout.pageSize - 1)
        for _ in 0..<pages {
            try? device.flash.erasePage(at: page)
            page += layout.pageSize
        }
        statistics.pageErases += pages
        return .success(opcode: 0x01)
    }

    mutating func executeCommand(device: inout DeviceState, effects: inout ServiceEffects) -> SecureDFUResponse {
        let fail = Self.failure(0x04)
        if initValid && storedInit == command { return .success(opcode: 0x04) }
        guard command.count == commandSize, commandSize > 0 else { return fail(.operationNotPermitted, nil) }
        guard command.count == MicrobitAppInitPacket.size, let packet = try? MicrobitAppInitPacket(bytes: command)
        else {
            return fail(.extendedError, 0x02)  // wrong command format (no protobuf init in this simulation)
        }
        guard packet.version == 1 else { return fail(.invalidObject, nil) }
        guard packet.applicationSize > 0 else { return fail(.extendedError, 0x04) }
        guard Int(packet.applicationSize) <= DFUApplication.maximumSize(for: family) else {
            return fail(.insufficientResources, nil)
        }
        adopt(packet)
        storedInit = command
        queueSettingsWrite(effects: &effects)
        // Settings written: from now on the old application is invalid (single bank).
        device.nordic.initCommand = command
        device.nordic.applicationValid = false
        effects.note("Nordic bootloader: init accepted (\(firmwareSize) bytes); the old application is invalid")
        return .success(opcode: 0x04)
    }

    /// Data Execute: the object is committed at once; the answer waits until fstorage is idle
    /// (`on_data_obj_execute_request_sched` reschedules itself while `nrf_fstorage_is_busy`).
    /// Nil: the answer follows from `workDone`.
    mutating func executeData(device: inout DeviceState, effects: inout ServiceEffects) -> SecureDFUResponse? {
        let fail = Self.failure(0x04)
        guard initValid, objectReceived == objectSize, objectSize > 0 || offset == firmwareSize else {
            return fail(.operationNotPermitted, nil)
        }
        lastOffset = offset
        lastCRC = crc
        objectSize = 0
        objectReceived = 0
        touch(effects: &effects)
        let idle = flash.idle(after: effects.now)
        guard idle <= effects.now else {
            executePending = true
            effects.schedule(after: idle - effects.now, tag: Self.executeTag)
            return nil
        }
        return finishDataExecute(device: &device, effects: &effects)
    }

    /// The answer to a data Execute once the flash is written: for the last object, the hash check and the reset.
    mutating func finishDataExecute(device: inout DeviceState, effects: inout ServiceEffects) -> SecureDFUResponse {
        guard lastOffset == firmwareSize else { return .success(opcode: 0x04) }
        let start = layout.applicationStart
        let written = (try? device.flash.read(start..<(start + UInt32(firmwareSize)))) ?? []
        if let expected = hash, Array(SHA256.hash(data: written)) != expected {
            statistics.hashFailures += 1
            effects.note("Nordic bootloader: the image's SHA-256 does not match the init packet")
            resetAfterSettingsWrite(effects: &effects)
            return Self.failure(0x04)(.extendedError, 0x0C)
        }
        device.nordic.applicationValid = true
        device.nordic.initCommand = nil
        storedInit = nil
        device.nordicApplicationReplaced(start: start, bytes: written)
        statistics.completedUpdates += 1
        effects.note("Nordic bootloader: image of \(firmwareSize) bytes valid, starting it")
        resetAfterSettingsWrite(effects: &effects)
        return .success(opcode: 0x04)
    }

    /// After the last data object's answer, valid image or not: the settings are written with
    /// their backup, and the reset follows the backup's write (SDK 16 `nrf_dfu_req_handler.c`
    /// `on_data_obj_execute_request_sched`: the response, then
    /// `nrf_dfu_settings_write_and_backup(on_dfu_complete)`; `on_dfu_complete` raises
    /// `NRF_DFU_EVT_DFU_COMPLETED`, on which `nrf_bootloader.c` `dfu_observer` calls
    /// `bootloader_reset(true)`: its `nrf_dfu_settings_backup(do_reset)` finds the backup page
    /// equal to the settings page just written and calls `do_reset` at once (`settings_write`
    /// skips an identical page), which waits `NRF_BL_RESET_DELAY_MS`, 0 in the V2 bootloader's
    /// `sdk_config.h`, and resets). So the reset comes when the queue has erased and written
    /// both pages: two page erases and two writes of the settings after the answer.
    mutating func resetAfterSettingsWrite(effects: inout ServiceEffects) {
        queueSettingsWrite(effects: &effects)
        let written = flash.idle(after: effects.now)
        effects.schedule(after: written - effects.now + Self.blResetDelay, tag: Self.resetTag)
    }

    /// `nrf_dfu_settings_write_and_backup` (SDK 16 `nrf_dfu_settings.c` `settings_write`): the
    /// settings page is erased and written, then the backup page likewise: four fstorage operations.
    mutating func queueSettingsWrite(effects: inout ServiceEffects) {
        let write = effects.timing.wordWrite * ((SecureDFUBootloaderLimits.settingsBytes + 3) / 4)
        for (duration, erase) in [
            (effects.timing.pageErase, true), (write, false), (effects.timing.pageErase, true), (write, false)
        ] {
            flash.enqueue(duration, silencesRadio: erase, at: effects.now)
        }
    }

    mutating func packet(_ bytes: [UInt8], device: inout DeviceState, effects: inout ServiceEffects) {
        statistics.packets += 1
        var dropped = false
        if currentType == 1 {
            if command.count + bytes.count <= commandSize { command += bytes } else { statistics.silentErrors += 1 }
        } else if currentType == 2 {
            // A packet that finds no free receive buffer is dropped before it becomes a request
            // (`nrf_dfu_ble.c` `on_write`): it does not count towards the receipt.
            guard flash.hasFreeBuffer(at: effects.now) else {
                statistics.droppedPackets += 1
                effects.note("Nordic bootloader: packet dropped (no free receive buffer)")
                return
            }
            if !initValid || objectReceived + bytes.count > objectSize {
                statistics.silentErrors += 1
            } else if flash.enqueue(
                effects.timing.wordWrite * ((bytes.count + 3) / 4), holdsBuffer: true, at: effects.now) == nil
            {
                // The flash queue is full: `on_data_obj_write_request` frees the buffer and ends
                // the request without offset or CRC, "so that the peer can detect a CRC error".
                // The packet still counts towards the receipt, whose response then carries the
                // zeroed offset and CRC (`nrf_dfu_ble.c` `ble_dfu_req_handler_callback`).
                dropped = true
                statistics.droppedPackets += 1
                effects.note("Nordic bootloader: packet dropped (flash queue full)")
            } else {
                let address = layout.applicationStart + UInt32(offset)
                var words = bytes
                while words.count % 4 != 0 { words.append(0xFF) }
                do {
                    try device.flash.writeWords(words, at: address)
                } catch {
                    statistics.silentErrors += 1
                }
                crc.update(bytes)
                offset += bytes.count
                objectReceived += bytes.count
            }
        }
        guard prnTarget > 0 else { return }
        prnCounter = prnCounter > 0 ? prnCounter - 1 : 0
        if prnCounter == 0 {
            prnCounter = prnTarget
            let r: SecureDFUResponse =
                dropped
                ? .checksum(offset: 0, crc: 0)
                : currentType == 1
                    ? .checksum(offset: UInt32(command.count), crc: CRC32.checksum(command))
                    : .checksum(offset: UInt32(offset), crc: crc.value)
            effects.notify(NordicGATT.secureControlPoint, r.bytes)
        }
    }
}

/// Counters of a simulated Nordic bootloader.
public struct NordicBootloaderStatistics: Sendable, Equatable {
    public var requests = 0
    public var packets = 0
    public var errorsSent = 0
    /// Packet writes that failed without an answer (overflow, no init, unaligned).
    public var silentErrors = 0
    /// Packets dropped because the flash queue (or every receive buffer) was full.
    public var droppedPackets = 0
    public var pageErases = 0
    public var hashFailures = 0
    public var completedUpdates = 0
    public var inactivityResets = 0
}
