import LinkModel

/// The controller's LE connection creation, one at a time per adapter (`Advertising`).
///
/// Linux asks the controller for one LE connection at a time and, while none is being
/// created, starts the next for the pending board whose advertisement it hears first
/// (`check_pending_le_conn` in net/bluetooth/hci_event.c, `hci_connect_le` in hci_conn.c).
/// Modelled by its mean: with `k` boards pending, the first advertisement comes after the
/// expected least of their phases, E[min Uᵢ] for Uᵢ uniform over each board's advertising
/// interval (`interval / (k + 1)` when all advertise alike); the board heard is taken to be
/// the one that advertises most often (the first of equals). The creation then ends at the
/// connection's first event, one connection interval later, and the controller takes the
/// next. The rest of the setup (`LinkProfile.connectionSetup` less one lone board's creation:
/// MTU exchange, discovery, subscriptions) runs alongside the other boards'. A board alone
/// is therefore connected after `connectionSetup`, as before.
extension Simulation {
    /// One adapter's creations: the boards waiting for theirs, and whether one is under way.
    struct CreationQueue: Sendable {
        struct Pending: Sendable {
            var job: Int
            var board: Int
            var initial: Bool
            var advertising: Advertising
        }
        var pending: [Pending] = []
        var busy = false
    }

    /// How board `b` advertises now.
    func advertising(of b: Int) -> Advertising {
        let board = boards[b].board
        if board.device.nordic.bootloaderActive { return .bootloader }
        return board.mode == .pairing ? .pairing : .application
    }

    /// Queues board `b`'s connection for job `j` on its adapter's controller.
    mutating func requestCreation(_ j: Int, board b: Int, initial: Bool) {
        let a = jobs[j].adapter
        creations[a].pending.append(.init(job: j, board: b, initial: initial, advertising: advertising(of: b)))
        guard !creations[a].busy else {
            trace.record(
                t, board: b, .connect,
                "waits for the controller: \(creations[a].pending.count - 1) connection(s) ahead of it")
            return
        }
        creations[a].busy = true
        // At `now`, after the other attempts of this instant: they count among the pending.
        queue.schedule(.creationStart(adapter: a), at: now)
    }

    /// The controller is free: it creates the connection of the pending board heard first.
    mutating func startCreation(adapter a: Int) {
        creations[a].pending.removeAll { jobs[$0.job].finished }
        let pending = creations[a].pending
        guard
            let chosen = pending.indices.min(by: { pending[$0].advertising.interval < pending[$1].advertising.interval }
            )
        else {
            creations[a].busy = false
            return
        }
        let p = creations[a].pending.remove(at: chosen)
        let heard = Advertising.firstHeard(among: pending.map(\.advertising.interval))
        let created = heard + link.connectionInterval
        let rest = max(link.connectionSetup - p.advertising.creation(on: link), .zero)
        queue.schedule(
            .connectEstablished(job: p.job, board: p.board, epoch: boards[p.board].epoch, initial: p.initial),
            at: now + created + rest)
        queue.schedule(.creationStart(adapter: a), at: now + created)
    }
}
