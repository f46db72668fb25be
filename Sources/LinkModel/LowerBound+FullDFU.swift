extension LowerBound {
    /// The full-DFU bound (docs/protocols/link-model.md, "Lower bounds"): the larger of
    /// (a) the upload's link-layer packets sent `packetsPerEvent` per connection event, and
    /// (b) the device's progressive erase and word writes of the image,
    /// plus the fixed costs: the connection setup, the round trips of the state read, test,
    /// reset and confirm (2 CI each), the reset delay, the reboot with the MCUboot `swap`,
    /// and the reconnection's setup.
    ///
    /// The upload is `imageBytes` cut into frames of at most `frameSize` bytes that carry
    /// `frameOverhead` bytes besides the data; each frame goes in writes of `attMTU − 3`
    /// bytes, each write (plus 7 bytes of ATT and L2CAP headers) in link-layer packets of
    /// `dataLength` bytes.
    public static func fullDFU(
        imageBytes: Int, frameSize: Int, frameOverhead: Int, attMTU: Int, dataLength: Int,
        pageSize: Int, swap: Duration, resetDelay: Duration, profile: LinkProfile,
        timing: DeviceTiming
    ) -> Duration {
        let ci = profile.connectionIntervalMicroseconds
        let dataPerFrame = max(frameSize - frameOverhead, 1)
        let writeSize = max(attMTU - 3, 1)
        func packets(frame: Int) -> Int {
            var left = frame, count = 0
            while left > 0 {
                let write = min(left, writeSize)
                count += AirTime.fragments(bytes: AirTime.writePDU(value: write), dataLength: dataLength).count
                left -= write
            }
            return count
        }
        let fullFrames = max(imageBytes, 0) / dataPerFrame
        let rest = max(imageBytes, 0) % dataPerFrame
        let totalPackets =
            fullFrames * packets(frame: frameSize) + (rest > 0 ? packets(frame: rest + frameOverhead) : 0)
        let events = Int64((totalPackets + max(profile.packetsPerEvent, 1) - 1) / max(profile.packetsPerEvent, 1))
        let air = events * ci
        let pages = (max(imageBytes, 0) + pageSize - 1) / max(pageSize, 1)
        let words = (max(imageBytes, 0) + 3) / 4
        let device = (timing.pageErase * pages + timing.wordWrite * words).wholeMicroseconds
        let fixed =
            2 * profile.connectionSetup.wholeMicroseconds
            + 4 * 2 * ci  // state read, test, reset, confirm round trips
            + resetDelay.wholeMicroseconds + timing.reboot.wholeMicroseconds + swap.wholeMicroseconds
        return .microseconds(max(air, device) + fixed)
    }
}
