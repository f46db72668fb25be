import FirmwareImage

/// The lower bounds the benchmark prints beside each result (docs/protocols/link-model.md,
/// "Lower bounds"). Each is the least modelled time the link model allows for the
/// protocol's required exchanges, so `achieved / bound` ≥ 1 shows how much a strategy waits.
public enum LowerBound {
    /// The partial-flashing bound for a program of `blocks` 64-byte blocks, `pagesOpened`
    /// of which start a page (and so wait for its erase).
    ///
    /// - Each block: its 4 writes leave in one event; the `01 FF` can leave no earlier than
    ///   the first event after the device work ends; the next block's writes leave in the
    ///   event after that. With work `W` (16 word writes, plus the page erase for a block
    ///   that opens a page) the block costs `(⌊W / CI⌋ + 2) · CI`: 2 CI when `W` < CI, and
    ///   the page erase rounded up to whole events for a page-opening block. (Read as
    ///   "2 CI + ⌈erase / CI⌉ · CI" it would count the ack's own event twice.)
    /// - The first block's work also stores `flashIncomplete` in the runtime's key-value page
    ///   (`partialFlashingEvent` puts it when absent: `DeviceTiming.flashIncompleteStore`),
    ///   unless `storesFlashIncomplete` is false (a board whose earlier flash left the key).
    /// - Fixed costs: the connection setup; STATUS and two REGION_INFO round trips (2 CI
    ///   each); END_OF_TRANSMISSION (leaves one event after the last ack, then the board
    ///   burns the buffer again) and the reboot.
    public static func partial(
        blocks: Int, pagesOpened: Int, family: ChipFamily, profile: LinkProfile,
        timing: DeviceTiming? = nil, storesFlashIncomplete: Bool = true
    ) -> Duration {
        let t = timing ?? DeviceTiming.of(family)
        let ci = profile.connectionIntervalMicroseconds
        let plainWork = t.blockWrite.wholeMicroseconds
        let openingWork = plainWork + t.pageErase.wholeMicroseconds
        let opened = min(max(pagesOpened, 0), max(blocks, 0))
        let plain = max(blocks, 0) - opened
        func blockCost(_ work: Int64) -> Int64 { (work / ci + 2) * ci }
        var transfer = Int64(plain) * blockCost(plainWork) + Int64(opened) * blockCost(openingWork)
        if storesFlashIncomplete, blocks > 0 {
            // The first block (it opens a page when any does: a plan starts at a page).
            let first = opened > 0 ? openingWork : plainWork
            let store = t.flashIncompleteStore(family).wholeMicroseconds
            transfer += blockCost(first + store) - blockCost(first)
        }
        let fixed =
            profile.connectionSetup.wholeMicroseconds
            + 3 * 2 * ci  // STATUS, REGION_INFO 1, REGION_INFO 2
            + ci + plainWork  // END_OF_TRANSMISSION leaves, the buffer is burnt again
            + t.reboot.wholeMicroseconds  // the board restarts into the new program
        return .microseconds(transfer + fixed)
    }

    // The full-DFU bound (`LowerBound.fullDFU`) belongs here too. It needs the SMP
    // server's figures (chunk size, reassembly buffers, MCUboot swap), which come with
    // the simulated SMP server: the larger of bytes-on-air / (packetsPerEvent packets per
    // CI) and the device's erase + write time, plus connection, state read, test, reset,
    // swap, reconnect and confirm.
}
