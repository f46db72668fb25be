import LinkModel

/// The controller's LE connection creation, one at a time per adapter (`Advertising`).
///
/// Linux keeps the boards to connect as pending addresses and scans passively. When it hears
/// one while no creation runs (`check_pending_le_conn`, net/bluetooth/hci_event.c), it turns
/// the scan off and asks the controller to connect to that one address (`hci_connect_le` in
/// hci_conn.c, `hci_le_create_conn_sync` in hci_sync.c, the peer address, not the accept
/// list), and waits for the connection to complete before it takes the next. The controller
/// then needs that board's next advertisement: the one heard has gone by. Modelled by its
/// mean: with `k` boards pending, the first is heard after the expected least of their phases
/// (`Advertising.firstHeard`), the one heard is taken to be the one that advertises most often
/// (the first of equals), its next advertisement comes one interval later, and the connection
/// completes one connection interval after that. The rest of the setup
/// (`LinkProfile.connectionSetup` less one lone board's creation: MTU exchange, discovery,
/// subscriptions) runs alongside the other boards'. A board alone is connected after
/// `connectionSetup`, as before, unless one creation alone is longer (a connection interval of
/// more than about 0.6 s in pairing mode).
extension Simulation {
    /// One adapter's creations: the boards waiting for theirs, and whether one is under way.
    struct CreationQueue: Sendable {
        struct Pending: Sendable {
            var job: Int
            var board: Int
            var initial: Bool
            /// The board's boot when it asked: a reset while it waits starts the attempt over.
            var epoch: Int
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
        creations[a].pending.append(.init(job: j, board: b, initial: initial, epoch: boards[b].epoch))
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
    /// A board that reset or went quiet while it waited starts its attempt over.
    mutating func startCreation(adapter a: Int) {
        creations[a].pending.removeAll { p in
            if jobs[p.job].finished { return true }
            let slot = boards[p.board]
            guard slot.epoch != p.epoch || slot.downUntil != nil || !slot.board.isConnectable else { return false }
            queue.schedule(.connectAttempt(job: p.job, startedAt: now, initial: p.initial), at: now)
            return true
        }
        let pending = creations[a].pending
        let intervals = pending.map { advertising(of: $0.board).interval }
        guard let chosen = intervals.indices.min(by: { intervals[$0] < intervals[$1] }) else {
            creations[a].busy = false
            return
        }
        let p = creations[a].pending.remove(at: chosen)
        let created = Advertising.firstHeard(among: intervals) + intervals[chosen] + link.connectionInterval
        let rest = max(
            link.connectionSetup - advertising(of: p.board).creation(connectionInterval: link.connectionInterval), .zero
        )
        queue.schedule(
            .connectEstablished(job: p.job, board: p.board, epoch: p.epoch, initial: p.initial),
            at: now + created + rest)
        queue.schedule(.creationStart(adapter: a), at: now + created)
    }
}
