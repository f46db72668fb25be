import LinkModel

/// The adapters: which one a flow runs on, waves within their connection limits, and the
/// controller refusing a connection it has no room for.
extension Simulation {
    /// Starts waiting flows while an adapter has a free connection, each on the adapter with room
    /// that runs the fewest flows (the first of equals; `ClassSchedule` and the real boards'
    /// `AdapterSlots` place boards the same way): a board starts as soon as one finishes, on the
    /// adapter that freed up. With `placesWithinLimits` off, every flow starts at once,
    /// spread over the adapters in turn.
    mutating func startWaitingJobs() {
        while !waitingJobs.isEmpty {
            let free = adapters.indices.map { connectionLimit(of: $0) - activeJobs[$0] }
            var chosen = 0
            if placesWithinLimits {
                let open = free.indices.filter { free[$0] > 0 }
                guard let best = open.min(by: { activeJobs[$0] < activeJobs[$1] }) else { return }
                chosen = best
            } else {
                chosen = activeJobs.indices.min(by: { activeJobs[$0] < activeJobs[$1] }) ?? 0
            }
            let j = waitingJobs.removeFirst()
            guard !jobs[j].finished else { continue }
            jobs[j].adapter = chosen
            jobs[j].started = true
            activeJobs[chosen] += 1
            if adapters.count > 1 || now > runStart {
                trace.record(
                    t, board: jobs[j].board, .connect, "starts on adapter \(chosen) (\(adapters[chosen].name))")
            }
            beginJob(j)
        }
    }

    /// How many flows adapter `a` runs at once: its profile's connections, or fewer when
    /// `connectionsPerAdapter` says so.
    public func connectionLimit(of a: Int) -> Int {
        min(adapters[a].maxConnections, connectionsPerAdapter ?? Int.max)
    }

    /// A flow ended: its adapter has room for the next waiting one.
    mutating func releaseAdapter(of j: Int) {
        guard jobs[j].started else { return }
        jobs[j].started = false
        activeJobs[jobs[j].adapter] -= 1
        if scheduling { startWaitingJobs() }
    }

    /// Live connections on adapter `a`.
    func liveConnections(on a: Int) -> Int {
        connections.values.reduce(0) { $0 + ($1.alive && $1.adapter == a ? 1 : 0) }
    }

    /// The controller has no room for another connection: it completes the LE Create Connection
    /// with HCI status 0x0D "Connection Rejected due to Limited Resources" (measured on a
    /// Raspberry Pi 3B+ at its 10th connection). Linux turns 0x0D into ECONNREFUSED
    /// (net/bluetooth/lib.c `bt_to_errno`) and bluetoothd answers Connect with
    /// "le-connection-refused" (src/error.c `btd_error_le_str`, src/device.c `att_connect_cb`).
    /// - Returns: the refusal's words, or nil when the adapter has room.
    mutating func refusalForLimit(_ j: Int) -> String? {
        let a = jobs[j].adapter
        guard liveConnections(on: a) >= adapters[a].maxConnections else { return nil }
        refusedForLimit += 1
        let why =
            "le-connection-refused: adapter \(a) (\(adapters[a].name)) holds its "
            + "\(adapters[a].maxConnections) connections (HCI 0x0D, limited resources)"
        trace.record(t, board: jobs[j].board, .connect, "connection refused: \(why)")
        return why
    }

    /// Notes a new connection in the adapter's peak.
    mutating func notePeak(on a: Int) {
        peakConnections[a] = max(peakConnections[a], liveConnections(on: a))
    }
}
