extension LowerBound {
    /// Which Nordic DFU a bound is for.
    public enum NordicProtocol: Sendable {
        /// Secure DFU (nRF52833): init object, then data objects of `objectSize` bytes.
        case secure(objectSize: Int)
        /// Legacy DFU (nRF51): Start DFU erases the whole application, then one stream.
        case legacy
    }

    /// The Nordic DFU bound: the least modelled time the protocol's required exchanges and the
    /// board's flash work allow, with no waits of the client's choosing (no delay after Create,
    /// no packet-receipt round trips).
    ///
    /// - Entry: the connection setup, the write to the buttonless (or DFU control) characteristic
    ///   and its answer (2 CI), the reboot into the bootloader and a new connection setup.
    /// - Secure DFU: Select, Create, Set PRN, Calculate checksum and Execute of the init command
    ///   (5 round trips, 2 CI each) and its packet writes; Set PRN and Select of the data (2 round
    ///   trips). The board's radio misses every connection event while its chip erases a page
    ///   (the SoftDevice runs flash work between radio events and an erase does not fit between
    ///   them: S113/S140 SoftDevice Specification, "Flash API timing"): the init's Execute is
    ///   answered in the first event after the settings write's two page erases (and the write
    ///   between them); per object the larger of two paths from the event that carries its
    ///   Create: the air (the Create's answer in the first event after the erase of its pages,
    ///   at the earliest the next one; its packets at `packetsPerEvent` per CI from the event
    ///   after; the checksum request with the last, its answer, the Execute and its answer, then
    ///   the next Create) and the flash (the erase, then the words; the Execute's answer in the
    ///   first event after, the next Create one CI later); the final reset, when the settings
    ///   write the last Execute starts has ended (at most one CI before that Execute's answer).
    /// - Legacy DFU: Start DFU with the erase of every page of the image (2 CI + erases), the
    ///   init packet (2 round trips), the firmware packets, Validate (2 CI), Activate (1 CI) and
    ///   the reboot into the new application.
    ///
    /// `attMTU` and `dataLength` are the bootloader connection's; writes carry `attMTU − 3` bytes
    /// (a multiple of 4 for Secure DFU, at most 244).
    public static func nordicDFU(
        imageBytes: Int, initBytes: Int, protocol kind: NordicProtocol, attMTU: Int, dataLength: Int,
        pageSize: Int, resetDelay: Duration, profile: LinkProfile, timing: DeviceTiming, settingsBytes: Int = 896
    ) -> Duration {
        let ci = profile.connectionIntervalMicroseconds
        let perEvent = max(profile.packetsPerEvent, 1)
        var writeSize = max(attMTU - 3, 1)
        if case .secure = kind { writeSize = max(4, min(244, writeSize & ~3)) } else { writeSize = min(writeSize, 20) }
        /// The link-layer packets of the writes covering `bytes`.
        func packets(_ bytes: Int) -> [Int] {
            var left = bytes
            var out: [Int] = []
            while left > 0 {
                let write = min(left, writeSize)
                out += AirTime.fragments(bytes: AirTime.writePDU(value: write), dataLength: dataLength)
                left -= write
            }
            return out
        }
        /// The events (in µs) that carry `bytes`: at most `perEvent` packets each, and no more
        /// than fit before the next event (the first always goes).
        func events(_ bytes: Int) -> Int64 {
            let limit = max(ci - AirTime.interFrameSpace, AirTime.exchange(central: 0, peripheral: 0))
            var count: Int64 = 0
            var inEvent = 0
            var cursor: Int64 = 0
            for packet in packets(bytes) {
                let exchange = AirTime.exchange(central: packet, peripheral: 0)
                if count == 0 || inEvent == perEvent || (inEvent > 0 && cursor + exchange > limit) {
                    count += 1
                    inEvent = 0
                    cursor = 0
                }
                cursor += exchange
                inEvent += 1
            }
            return count * ci
        }
        func erase(_ bytes: Int) -> Int64 {
            Int64((bytes + pageSize - 1) / max(pageSize, 1)) * timing.pageErase.wholeMicroseconds
        }
        let entry = 2 * profile.connectionSetup.wholeMicroseconds + 2 * ci + timing.reboot.wholeMicroseconds
        let finish = resetDelay.wholeMicroseconds + timing.reboot.wholeMicroseconds
        let bytes = max(imageBytes, 0)
        switch kind {
        case let .secure(objectSize):
            let size = max(objectSize, 1)
            func words(_ bytes: Int) -> Int64 { (timing.wordWrite * ((bytes + 3) / 4)).wholeMicroseconds }
            /// Connection intervals from an event until the first event at or after `time` µs, at least one.
            func answer(after time: Int64) -> Int64 { max((time + ci - 1) / ci, 1) }
            let settings = 2 * timing.pageErase.wholeMicroseconds + words(settingsBytes)
            var transfer = 4 * 2 * ci + (1 + answer(after: settings)) * ci + events(initBytes) + 2 * 2 * ci
            var offset = 0
            while offset < bytes {
                let object = min(size, bytes - offset)
                let air = (answer(after: erase(object)) + events(object) / ci + 4) * ci
                let flash = erase(object) + words(object)
                transfer += max(air, (flash / ci + 2) * ci)
                offset += object
            }
            // The last Execute's answer comes at most one CI after the bootloader took it; from
            // then it writes the settings and their backup (two erases, two writes) and resets
            // (`resetDelay` is the legacy bootloader's).
            let reset = max(2 * timing.pageErase.wholeMicroseconds + 2 * words(settingsBytes) - ci, 0)
            return .microseconds(entry + transfer + reset + timing.reboot.wholeMicroseconds)
        case .legacy:
            let transfer = 2 * ci + erase(bytes) + 2 * 2 * ci + events(initBytes) + events(bytes) + 2 * ci + ci
            return .microseconds(entry + transfer + finish)
        }
    }
}
