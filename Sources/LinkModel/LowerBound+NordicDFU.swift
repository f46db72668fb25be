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
    ///   trips); per object the larger of two paths from the event that carries its Create:
    ///   the air (the Create's answer, its packets at `packetsPerEvent` per CI from the event
    ///   after, the checksum request with the last, its answer, the Execute and its answer,
    ///   then the next Create: `events + 5` CI) and the flash (the Create starts the erase of
    ///   its pages, the words are written after it, the Execute's answer leaves in the first
    ///   event after the flash is done, the next Create one CI later); the first object's
    ///   flash work also waits for the settings write the init's Execute started six events
    ///   before (two page erases and two writes of `settingsBytes`); the final reset.
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
        func packets(_ bytes: Int) -> Int {
            var left = bytes, count = 0
            while left > 0 {
                let write = min(left, writeSize)
                count += AirTime.fragments(bytes: AirTime.writePDU(value: write), dataLength: dataLength).count
                left -= write
            }
            return count
        }
        func events(_ bytes: Int) -> Int64 { Int64((packets(bytes) + perEvent - 1) / perEvent) * ci }
        func erase(_ bytes: Int) -> Int64 {
            Int64((bytes + pageSize - 1) / max(pageSize, 1)) * timing.pageErase.wholeMicroseconds
        }
        let entry = 2 * profile.connectionSetup.wholeMicroseconds + 2 * ci + timing.reboot.wholeMicroseconds
        let finish = resetDelay.wholeMicroseconds + timing.reboot.wholeMicroseconds
        let bytes = max(imageBytes, 0)
        switch kind {
        case let .secure(objectSize):
            let size = max(objectSize, 1)
            var transfer = 5 * 2 * ci + events(initBytes) + 2 * 2 * ci
            func words(_ bytes: Int) -> Int64 { (timing.wordWrite * ((bytes + 3) / 4)).wholeMicroseconds }
            // Flash work still running when the first object's Create comes, counted from its event.
            var pending = 2 * (timing.pageErase.wholeMicroseconds + words(settingsBytes)) - 6 * ci
            var offset = 0
            while offset < bytes {
                let object = min(size, bytes - offset)
                let air = (events(object) / ci + 5) * ci
                let flash = max(pending, 0) + erase(object) + words(object)
                transfer += max(air, (flash / ci + 2) * ci)
                pending = 0
                offset += object
            }
            return .microseconds(entry + transfer + finish)
        case .legacy:
            let transfer = 2 * ci + erase(bytes) + 2 * 2 * ci + events(initBytes) + events(bytes) + 2 * ci + ci
            return .microseconds(entry + transfer + finish)
        }
    }
}
