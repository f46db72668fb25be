import LinkModel
import NordicDFU
import NordicDFUFrames

/// The two protocols' steps, in the order `SecureDFUFlow` and `LegacyDFUFlow` take them.
extension NordicDFUEstimator {
    typealias Steps = (parts: [PathEstimate.Part], packets: Int)

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
        // Select command (with the subscription), Create, PRN 0, the init writes and Calculate
        // checksum, Execute, PRN, Select data.
        clock.exchange([2, 2])
        clock.exchange([6])
        clock.exchange([3])
        clock.exchange(Self.writes(MicrobitAppInitPacket.size, size: packetSize) + [1])
        clock.exchange([1])
        clock.exchange([3])
        clock.exchange([2])
        let initDone = clock.event
        let receipts = options.securePacketReceipts == 0 ? Int.max : Int(options.securePacketReceipts)
        var createAndWait: Int64 = 0, transfer: Int64 = 0, execute: Int64 = 0, packets = 0
        var offset = 0
        var lastWrite: Int64 = clock.event
        while offset < applicationBytes {
            let size = min(objectSize, applicationBytes - offset)
            var mark = clock.event
            clock.exchange([9])
            // The first packets leave in the first event after the wait; the erase of the
            // object's pages runs meanwhile (longer erases are waited for).
            let wait = max(options.objectDelay, board.timing.pageErase * board.pages(size))
            clock.event = clock.firstEvent(after: clock.event, wait: wait) - clock.ci
            createAndWait += clock.event - mark
            mark = clock.event
            var left = Self.writes(size, size: packetSize)
            packets += left.count
            repeat {
                let batch = Array(left.prefix(receipts))
                left.removeFirst(batch.count)
                // A batch shorter than the receipt interval ends the object: Calculate checksum follows it.
                clock.exchange(batch.count < receipts ? batch + [1] : batch)
                if batch.count == receipts && left.isEmpty { clock.exchange([1]) }
            } while !left.isEmpty
            transfer += clock.event - mark
            mark = clock.event
            lastWrite = clock.exchange([1])
            execute += clock.event - mark
            offset += size
        }
        // The last Execute: the board checks the image, answers, resets and boots the application.
        let end = max(clock.event, lastWrite + (bootloaderResetDelay + board.timing.reboot).wholeMicroseconds)
        let finalExecute = applicationBytes > 0 ? 2 * clock.ci : 0
        let parts: [PathEstimate.Part] = [
            .init(name: "enter the bootloader (buttonless) and reconnect", duration: .microseconds(entry)),
            .init(name: "init packet", duration: .microseconds(initDone)),
            .init(
                name: "data objects: Create and the wait after it (page erase meanwhile)",
                duration: .microseconds(createAndWait)),
            .init(
                name: "packets and receipt round trips (PRN \(options.securePacketReceipts))",
                duration: .microseconds(transfer)),
            .init(name: "checksum and Execute of each object", duration: .microseconds(execute - finalExecute)),
            .init(name: "final Execute, reset and reboot", duration: .microseconds(end - clock.event + finalExecute))
        ]
        return (parts, packets)
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
            .init(name: "activate, reboot, reconnect and verify", duration: .microseconds(end - validated))
        ]
        return (parts, packets)
    }
}
