import LinkModel
import NordicDFU
import NordicDFUFrames

/// The two protocols' steps, in the order `SecureDFUFlow` and `LegacyDFUFlow` take them.
extension NordicDFUEstimator {
    typealias Steps = (parts: [PathEstimate.Part], packets: Int)

    /// Legacy DFU's last part, which ends with the connection to the new program.
    static let legacyActivatePart = "activate, reboot, reconnect and verify"
    /// The read-back of the new program (on a new connection after Secure DFU).
    static let readBackPart = "read back the program"

    /// From the decision until the connection to the bootloader is set up: the entry write
    /// leaves in the next event, the board resets `resetAfter` after it arrives and the client
    /// sees the link drop in the first event after that; it connects again after its reconnect
    /// delay (or once the board is back, if later).
    func entry(_ context: EstimateContext, resetAfter: Duration) -> Int64 {
        let profile = context.link.profile
        let clock = DFULinkClock(profile: profile, dataLength: profile.dataLength)
        let write = clock.ci
        let drop = clock.firstEvent(after: write, wait: resetAfter)
        let boardBack = write + (resetAfter + context.board.timing.reboot).wholeMicroseconds
        return max(drop + options.reconnectDelay.wholeMicroseconds, boardBack)
            + profile.connectionSetup.wholeMicroseconds
    }

    /// Writes of at most `size` bytes covering `bytes`.
    static func writes(_ bytes: Int, size: Int) -> [Int] {
        let size = max(size, 1)
        return stride(from: 0, to: max(bytes, 0), by: size).map { min(size, bytes - $0) }
    }

    func secureSteps(_ context: EstimateContext) -> Steps {
        let (mtu, dataLength) = bootloaderLink(context.link)
        let packetSize = max(20, min(244, (mtu - 3) & ~3))
        let board = context.board
        let entry = entry(context, resetAfter: buttonlessResetDelay)
        var clock = DFULinkClock(profile: context.link.profile, dataLength: dataLength)
        var flash = SecureFlashTimeline(timing: board.timing)
        var pacing = SecureDFUPacing()
        // Select command (with the subscription), Create, PRN 0, the init writes and Calculate
        // checksum, Execute (the bootloader writes its settings meanwhile), PRN and Select of the data.
        clock.exchange([2, 2])
        clock.exchange([6])
        clock.exchange([3])
        clock.exchange(Self.writes(MicrobitAppInitPacket.size, size: packetSize) + [1])
        // The Execute's answer leaves once the settings pages are erased: the board's radio
        // misses the events during an erase (`SecureDFUFlashQueue`).
        pacing.settingsQueued(at: .microseconds(clock.event), options: options)
        flash.settings(at: clock.exchange([1]))
        clock.answer(notBefore: flash.silentUntil)
        clock.exchange([3])
        clock.exchange([2])
        let initDone = clock.event
        var create: Int64 = 0, transfer: Int64 = 0, execute: Int64 = 0, packets = 0
        var offset = 0
        var answered: Int64 = clock.event
        while offset < applicationBytes {
            let size = min(objectSize, applicationBytes - offset)
            var mark = clock.event
            let writes = Self.writes(size, size: packetSize)
            packets += writes.count
            pacing.objectCreated(
                at: .microseconds(clock.event), bytes: size, packets: writes.count, packetSize: packetSize,
                options: options)
            // The Create's event starts the erase (behind the settings write for the first
            // object); its answer leaves in the first event after the erase.
            flash.erase(pages: board.pages(size), at: clock.exchange([9]))
            clock.answer(notBefore: flash.silentUntil)
            create += clock.event - mark
            mark = clock.event
            sendObject(writes, clock: &clock, flash: &flash, pacing: pacing)
            transfer += clock.event - mark
            mark = clock.event
            // Execute is answered in the first event after it arrived and the flash is written.
            let arrived = clock.event + clock.ci
            answered = max(arrived, flash.busyUntil)
            clock.event = (answered / clock.ci + 1) * clock.ci
            pacing.flashIdle(at: .microseconds(clock.event))
            execute += clock.event - mark
            offset += size
        }
        // The last Execute: the board checks the image, answers, writes its settings and their
        // backup (two erases, two writes), resets when they are written and boots the application.
        if applicationBytes > 0 { flash.settings(at: answered) }
        let end = max(clock.event, max(answered, flash.busyUntil) + board.timing.reboot.wholeMicroseconds)
        let finalExecute = applicationBytes > 0 ? 2 * clock.ci : 0
        let parts: [PathEstimate.Part] = [
            .init(name: "enter the bootloader (buttonless) and reconnect", duration: .microseconds(entry)),
            .init(name: "init packet", duration: .microseconds(initDone)),
            .init(name: "data objects: Create (the bootloader queues the page erase)", duration: .microseconds(create)),
            // From each Create's answer to its Execute's the board's objects follow one another
            // with no gap longer than a page erase: one stretch of radio use, which boards
            // flashed together share (`RadioDemand`).
            .init(
                name: "packets of each object, paced by the bootloader's flash queue, its checksum and Execute "
                    + "(PRN \(options.securePacketReceipts))",
                duration: .microseconds(transfer + execute - finalExecute)),
            .init(name: "final Execute, reset and reboot", duration: .microseconds(end - clock.event + finalExecute))
        ]
        return (parts, packets)
    }

    /// One object's packets as `SecureDFUFlow` sends them: each group the pacing (or a receipt)
    /// lets go is handed to the link at once and fills the events after it, at most
    /// `packetsPerEvent` and what fits in the interval; the checksum request goes with the last.
    /// Returns with `clock.event` at the checksum's answer; the flash timeline gets each
    /// packet's write at the event that carried it.
    func sendObject(
        _ writes: [Int], clock: inout DFULinkClock, flash: inout SecureFlashTimeline, pacing: SecureDFUPacing
    ) {
        let prn = options.securePacketReceipts == 0 ? Int.max : Int(options.securePacketReceipts)
        let ci = clock.ci
        let limit = max(ci - AirTime.interFrameSpace, AirTime.exchange(central: 0, peripheral: 0))
        var event = clock.event
        var inEvent = 0
        var cursor: Int64 = 0
        /// Puts a write of `bytes` handed at `handed` on the link; returns the event of its last packet.
        func place(_ bytes: Int, handed: Int64) -> Int64 {
            for fragment in clock.packets([bytes]) {
                let exchange = AirTime.exchange(central: fragment, peripheral: 0)
                if event <= handed || inEvent >= clock.perEvent || (inEvent > 0 && cursor + exchange > limit) {
                    event = max(event + ci, (max(handed, 0) / ci + 1) * ci)
                    inEvent = 0
                    cursor = 0
                }
                cursor += exchange
                inEvent += 1
            }
            return event
        }
        var index = 0
        var handed = clock.event
        while index < writes.count {
            var last = index
            while last < writes.count, last - index < prn,
                pacing.sendTime(ofPacket: last).wholeMicroseconds <= handed
            {
                last += 1
            }
            if last == index {
                handed = max(handed, pacing.wakeTime(from: index, packets: writes.count).wholeMicroseconds)
                continue
            }
            var arrival = handed
            for k in index..<last {
                arrival = place(writes[k], handed: handed)
                flash.write(bytes: writes[k], at: arrival)
            }
            let count = last - index
            index = last
            if index == writes.count && count < prn {
                clock.event = place(1, handed: handed) + ci
                return
            }
            if count == prn {
                // The flow waits for the receipt, which comes in the event after the group's last packet.
                handed = arrival + ci
                if index == writes.count {
                    clock.event = handed
                    clock.exchange([1])
                    return
                }
            }
        }
    }

    func legacySteps(_ context: EstimateContext) -> Steps {
        let (mtu, dataLength) = bootloaderLink(context.link)
        let packetSize = max(4, min(20, (mtu - 3) & ~3))
        let board = context.board
        let entry = entry(context, resetAfter: .zero)
        var clock = DFULinkClock(profile: context.link.profile, dataLength: dataLength)
        // Start DFU with the sizes (and the subscription): answered once every page is erased.
        let erase = board.timing.pageErase * board.pages(applicationBytes)
        let startSent = clock.event + clock.events(for: clock.packets([2, 2, 12])) * clock.ci
        clock.event = clock.firstEvent(after: startSent, wait: erase)
        let started = clock.event
        clock.exchange([2, LegacyInitPacket.size, 2])
        let initDone = clock.event
        // PRN and Receive firmware go with the first batch; a receipt after each batch, the
        // completion answer after the last packet.
        let receipts = options.legacyPacketReceipts == 0 ? Int.max : Int(options.legacyPacketReceipts)
        var left = Self.writes(applicationBytes, size: packetSize)
        let packets = left.count
        var first = true
        repeat {
            let batch = Array(left.prefix(receipts))
            left.removeFirst(batch.count)
            clock.exchange(first ? [3, 1] + batch : batch)
            first = false
        } while !left.isEmpty
        let transferred = clock.event
        clock.exchange([1])
        let validated = clock.event
        // Activate: the board resets 100 ms after it, the client sees the link drop, waits its
        // reconnect delay and connects to the new application.
        let activate = clock.event + clock.ci
        let drop = clock.firstEvent(after: activate, wait: bootloaderResetDelay)
        let boardBack = activate + (bootloaderResetDelay + board.timing.reboot).wholeMicroseconds
        let end =
            max(drop + options.reconnectDelay.wholeMicroseconds, boardBack)
            + context.link.profile.connectionSetup.wholeMicroseconds
        let parts: [PathEstimate.Part] = [
            .init(name: "enter the bootloader (DFU control) and reconnect", duration: .microseconds(entry)),
            .init(name: "Start DFU and the erase of the application", duration: .microseconds(started)),
            .init(name: "init packet", duration: .microseconds(initDone - started)),
            .init(
                name: "packets and receipt round trips (PRN \(options.legacyPacketReceipts))",
                duration: .microseconds(transferred - initDone)),
            .init(name: "validate", duration: .microseconds(validated - transferred)),
            .init(name: Self.legacyActivatePart, duration: .microseconds(end - validated))
        ]
        return (parts, packets)
    }
}

/// The Secure DFU bootloader's flash work as the estimate steps it: one operation after the
/// other from the event that queued it (`SecureDFUFlashQueue` in the simulation), in µs.
struct SecureFlashTimeline {
    let pageErase: Int64
    let wordWrite: Duration
    var busyUntil: Int64 = 0
    /// The end of the last page erase: the board's radio misses the events until then.
    var silentUntil: Int64 = 0

    init(timing: DeviceTiming) {
        pageErase = timing.pageErase.wholeMicroseconds
        wordWrite = timing.wordWrite
    }

    /// The init packet's (or the last data object's) Execute at `event`: the settings and their
    /// backup, each erased and written.
    mutating func settings(at event: Int64) {
        let write = (wordWrite * ((SecureDFUBootloaderLimits.settingsBytes + 3) / 4)).wholeMicroseconds
        busyUntil = max(busyUntil, event) + 2 * (pageErase + write)
        silentUntil = busyUntil - write
    }

    mutating func erase(pages: Int, at event: Int64) {
        busyUntil = max(busyUntil, event) + Int64(pages) * pageErase
        silentUntil = busyUntil
    }

    mutating func write(bytes: Int, at event: Int64) {
        busyUntil = max(busyUntil, event) + (wordWrite * ((bytes + 3) / 4)).wholeMicroseconds
    }
}
