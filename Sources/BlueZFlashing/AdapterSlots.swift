import BlueZTransport

/// How many boards each adapter has connected, and how many it may: a class is flashed in
/// waves, each board starting when one finishes, on the adapter that freed up.
///
/// No controller reports how many LE connections it holds (no HCI command does; Home
/// Assistant's bleak-retry-connector says "almost none of the adapters document how many
/// connection slots they have"). So each adapter starts at `BlueZFlashSettings.maxConnectionsPerAdapter`
/// and, when a connect is refused while other boards are connected through it, its limit is
/// lowered to the boards it holds and the refused board waits for a slot (`backOff`).
actor AdapterSlots {
    struct Adapter {
        let name: String?
        var limit: Int
        var active = 0
    }
    private var adapters: [Adapter]
    private var waiters: [CheckedContinuation<Int, Never>] = []

    /// `names` (nil: the first adapter switched on), each with `limit` connections at once.
    init(_ names: [String?], limit: Int) {
        adapters = (names.isEmpty ? [nil] : names).map { Adapter(name: $0, limit: max(1, limit)) }
    }

    /// Waits for a free connection and takes it on the adapter with room that holds the fewest boards.
    /// - Returns: the adapter's index.
    func take() async -> Int {
        if let a = freest() {
            adapters[a].active += 1
            return a
        }
        return await withCheckedContinuation { waiters.append($0) }
    }

    /// How many boards wait for a connection.
    var waiting: Int { waiters.count }

    /// Gives the connection back; a waiting board takes it.
    func give(_ a: Int) {
        adapters[a].active -= 1
        wakeWaiters()
    }

    /// A connect through `a` was refused in the way a controller out of connections refuses.
    /// With other boards connected through it, its limit becomes the boards it holds and the
    /// refused board gives its connection back and waits for the next one (true); alone on the
    /// adapter, the refusal is the board's own (false).
    ///
    /// Only a refusal that names the cause (`isRefusedForWantOfConnections`) lowers the limit; an
    /// attempt the kernel gave up on is also what a board that stopped advertising gives, so it
    /// only makes the board wait for the next free connection.
    func backOff(_ a: Int, lowersLimit: Bool) -> Bool {
        let others = adapters[a].active - 1
        guard others > 0 else { return false }
        if lowersLimit { adapters[a].limit = min(adapters[a].limit, others) }
        adapters[a].active -= 1
        return true
    }

    func name(_ a: Int) -> String? { adapters[a].name }
    func limit(_ a: Int) -> Int { adapters[a].limit }
    var count: Int { adapters.count }

    /// The adapter with room that holds the fewest boards (the first of equals), as
    /// `ClassSchedule` and the simulated adapters place a board.
    private func freest() -> Int? {
        let open = adapters.indices.filter { adapters[$0].limit > adapters[$0].active }
        return open.min(by: { adapters[$0].active < adapters[$1].active })
    }

    private func wakeWaiters() {
        while !waiters.isEmpty, let a = freest() {
            adapters[a].active += 1
            waiters.removeFirst().resume(returning: a)
        }
    }

    /// The out-of-connections symptoms of a connect: the controller's HCI 0x0D reaches bluetoothd
    /// as ECONNREFUSED (Linux net/bluetooth/lib.c `bt_to_errno`) and Connect fails with
    /// "le-connection-refused" (BlueZ src/error.c `btd_error_le_str`); an attempt the controller
    /// never completes is cancelled by the kernel and fails with "le-connection-abort-by-local"
    /// (0x16 → ECONNABORTED), the symptom Home Assistant's maintainers report for adapters out of
    /// slots (home-assistant/core PR #84331, bleak-retry-connector PR #67).
    static func isOutOfConnections(_ error: any Error) -> Bool {
        isRefusedForWantOfConnections(error) || "\(error)".lowercased().contains("le-connection-abort-by-local")
    }

    /// The controller's own refusal (HCI 0x0D, "le-connection-refused"), as opposed to an
    /// attempt the kernel cancelled.
    static func isRefusedForWantOfConnections(_ error: any Error) -> Bool {
        isRefusedForWantOfConnections("\(error)")
    }

    /// The same, from an error's message.
    static func isRefusedForWantOfConnections(_ message: String) -> Bool {
        let text = message.lowercased()
        return text.contains("le-connection-refused") || text.contains("limited resources")
    }

    /// Resolves `all` to every adapter switched on, in the order BlueZ lists them; an adapter
    /// named twice is one adapter (its connections are not doubled).
    static func resolve(_ names: [String], settings: BlueZFlashSettings) async throws -> [String?] {
        guard names.contains("all") else {
            var out: [String] = []
            for n in names where !out.contains(n) { out.append(n) }
            return out.isEmpty ? [settings.adapter] : out
        }
        let bus = try await BlueZBus.open(bus: settings.bus)
        defer { bus.close() }
        let tree = try await bus.objects()
        let on = tree.adapters.filter(\.powered).map(\.name)
        guard !on.isEmpty else {
            throw BlueZError.noAdapter(requested: "all", available: tree.adapters.map(\.name))
        }
        var out: [String] = []
        for n in names.flatMap({ $0 == "all" ? on : [$0] }) where !out.contains(n) { out.append(n) }
        return out
    }
}
