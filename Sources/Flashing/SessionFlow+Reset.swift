import PartialFlashing
import Transport

/// The reset between a partial flash that gave up and the full update that follows it.
///
/// A block whose answer never came may be a flash operation the board waits on for ever
/// (codal-microbit-v2 `source/MicroBitFlash.cpp`), which starves its fibers: a buttonless DFU
/// on such a board only disconnects it and stops its advertising (the shutdown waits for the
/// idle callback, `MicroBitBLEManager::idleCallback`), leaving it unreachable until a power
/// cycle. `FF 01` resets it from the write handler's interrupt, hung or not. So before any full
/// update that follows written blocks, the session resets the board and waits for it to come
/// back (`BoardReset`); a board that does not come back gets no buttonless DFU, and the error
/// says to power-cycle it.
extension SessionFlow {
    mutating func resetBeforeFallback(_ reason: FlashReason, now: Duration) -> [FlowAction] {
        var child = ChildFlow(BoardReset(settings: partialSettings), scope: "reset.")
        let up = linkUp
        let (actions, result) = child.perform { $0.begin(linkUp: up, now: now) }
        enter(.resetting(child, reason: reason))
        guard let result else { return actions }
        return actions + resetFinished(result, reason: reason, now: now)
    }

    mutating func resetting(
        _ child: ChildFlow<BoardReset>, reason: FlashReason, event: FlowEvent, now: Duration
    ) -> [FlowAction] {
        var child = child
        let (actions, result) = child.handle(event, now: now)
        enter(.resetting(child, reason: reason))
        guard let result else { return actions }
        return actions + resetFinished(result, reason: reason, now: now)
    }

    private mutating func resetFinished(
        _ result: Result<ConnectionInfo, any Error>, reason: FlashReason, now: Duration
    ) -> [FlowAction] {
        switch result {
        case .success:
            // `step` took the new link's services from the `connected` event.
            return goFull(reason, fallback: true, now: now)
        case let .failure(error):
            return fail(FlashError.notBackAfterReset(reason: reason, error: error))
        }
    }
}
