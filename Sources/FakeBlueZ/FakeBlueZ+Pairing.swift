import FirmwareImage
import SimulatedBoard

/// What a board in pairing mode does after a successful new pairing: it waits until the
/// security and peer-data events stop, disconnects once, shows a tick and resets.
///
/// CODAL (micro:bit V2): `MicroBitBLEManager.cpp` `pairingComplete` stamps the time at a
/// successful `BLE_GAP_EVT_AUTH_STATUS` (`MICROBIT_BLE_PAIR_AUTH`) and again at every
/// `PM_EVT_CONN_SEC_SUCCEEDED` and `PM_EVT_PEER_DATA_UPDATE_SUCCEEDED` (`MICROBIT_BLE_PAIR_UPDATE`,
/// e.g. a CCCD write stored for the bond) until the pairing counts as complete: 2 s after the
/// last stamp (`MICROBIT_BLE_PAIRING_EVENT_DELAY`, checked by `pairingMode` every second; the
/// check's granularity is not modelled). Then `idleCallback` disconnects once
/// (`MICROBIT_BLE_DISCONNECT_AFTER_PAIRING_DELAY` 2 s after the last stamp, already past), and
/// `pairingMode` shows the tick for 15 s and calls `microbit_reset()`; later events change nothing. Calliope mini 3 (`calliope-edu/codal-microbit-v2`, same file,
/// `pairingMode`): the tick lasts 2 s. DAL (micro:bit V1, Calliope mini 1/2):
/// `MicroBitBLEManager.cpp` `pairingComplete`, `idleTick` disconnect 0.5 s after the pairing
/// (`MICROBIT_BLE_DISCONNECT_AFTER_PAIRING_DELAY`), `pairingMode` resets 15 s later. A pairing in
/// application mode starts none of this (CODAL `pairingComplete` returns unless in pairing mode).
extension FakeBlueZ {
    /// Quiet time after the last security event before the pairing counts as complete (DAL: none).
    static func settleTime(_ board: Board) -> Duration {
        board.family == .nrf51 ? .zero : .seconds(2)
    }

    /// From the completion to the disconnect.
    static func disconnectDelay(_ board: Board) -> Duration {
        board.family == .nrf51 ? .milliseconds(500) : .zero
    }

    /// From the completion to the reset: the tick.
    static func tickTime(_ board: Board) -> Duration {
        board == .calliopeMini3 ? .seconds(2) : .seconds(15)
    }

    /// A new pairing or a stored peer-data update on device `i`: (re)starts the quiet time while
    /// the board is in pairing mode and the pairing is not complete yet. At time scale 0 the
    /// board's timers would fire before any client could act, so they do not run (as the
    /// bootloaders' inactivity reset).
    func securityEvent(_ i: Int, newPairing: Bool, _ s: inout FakeState) {
        guard options.timeScale > 0 else { return }
        let board = s.board(of: i)
        guard board.mode == .pairing, !board.inNordicBootloader else { return }
        if s.devices[i].pairingBoot != board.device.bootCount {
            // The board reset since: its pairing-mode loop, and what it knew, are gone.
            s.devices[i].pairingStamp = 0
            s.devices[i].pairingComplete = false
            s.devices[i].pairingBoot = board.device.bootCount
        }
        guard !s.devices[i].pairingComplete, newPairing || s.devices[i].pairingStamp > 0 else { return }
        // DAL completes at the pairing itself (`pairingComplete`); CODAL waits for the updates.
        if !newPairing, board.profile.family == .nrf51 { return }
        s.devices[i].pairingStamp += 1
        let stamp = s.devices[i].pairingStamp
        schedule(.pairingSettled(device: i, stamp: stamp), after: Self.settleTime(board.profile.board), &s)
    }

    /// Whether `stamp` is still the latest event of this boot's pairing.
    private func current(_ i: Int, _ stamp: Int, _ s: FakeState) -> Bool {
        s.devices[i].pairingStamp == stamp && s.devices[i].pairingBoot == s.board(of: i).device.bootCount
    }

    /// The quiet time is over: the pairing is complete; the disconnect and the reset follow.
    func pairingSettled(_ i: Int, stamp: Int, _ s: inout FakeState) {
        guard current(i, stamp, s), !s.devices[i].pairingComplete else { return }
        s.devices[i].pairingComplete = true
        let board = s.board(of: i).profile.board
        note("[\(s.devices[i].name)] pairing complete: the board disconnects, then resets in \(Self.tickTime(board))")
        schedule(.pairingDisconnect(device: i, stamp: stamp), after: Self.disconnectDelay(board), &s)
        schedule(.pairingReset(device: i, stamp: stamp), after: Self.tickTime(board), &s)
    }

    /// The board drops the link of the pairing host (once).
    func pairingDisconnect(_ i: Int, stamp: Int, _ s: inout FakeState) {
        guard current(i, stamp, s) else { return }
        dropLink(i, &s)
    }

    /// The tick is over: `microbit_reset()`.
    func pairingReset(_ i: Int, stamp: Int, _ s: inout FakeState) {
        guard current(i, stamp, s) else { return }
        let b = s.boardIndex(i)
        let down = s.devices[b].host.resetsItself()
        note("[\(s.devices[i].name)] resets after the pairing: link lost, back in \(down) (modelled)")
        dropLink(i, &s)
        schedule(.boot(device: i), after: down, &s)
    }
}
