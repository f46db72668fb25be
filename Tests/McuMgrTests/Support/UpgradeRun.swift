import SMP
import Transport
@testable import McuMgr

/// Drives an `McuMgrUpgrade` against a `FakeImageDevice` on virtual time: the
/// device answers every write at once, notifications are cut to MTU − 3 bytes,
/// timers and reconnects fire in time order. Faults are scripted.
struct UpgradeRun {
    var flow: McuMgrUpgrade
    var device: FakeImageDevice
    var mtu = 247
    var now: Duration = .zero

    /// Notifications (by index) lost on air.
    var lostNotifications: Set<Int> = []
    /// Drop the link right after the device has taken this many upload frames
    /// (its answer to the last one and any writes still queued are lost).
    var disconnectAfterUploadFrames: Int?
    /// Connection attempts refused before one succeeds.
    var refusedConnections = 0
    /// The link drops as the first reset request goes out; the device never sees it.
    var loseFirstReset = false
    /// The device also resets at the scripted disconnect (the upload session is lost).
    var resetAtDisconnect = false
    /// The device never answers (it is out of range but the link stays up).
    var silent = false
    /// Writes longer than this vanish without an error (a controller that drops long write commands).
    var dropsWritesLongerThan: Int?
    /// The device resets (and the link drops) right after it handled the first request whose
    /// answer header this matches; that answer is lost.
    var resetInsteadOfAnswering: ((SMPHeader) -> Bool)?

    private(set) var actions: [FlowAction] = []
    private(set) var writes: [[UInt8]] = []
    private(set) var notifications = 0
    /// The most upload requests in flight at once.
    private(set) var maxInFlight = 0
    /// Bytes sent but not yet confirmed when the scripted disconnect happened.
    private(set) var unconfirmedAtDisconnect: Int?
    private var queue: [FlowEvent] = []
    private var timers: [String: Duration] = [:]
    private var connectAt: Duration?
    private var linkUp = true
    private var disconnectDone = false

    init(image: McuMgrUpgradeImage, options: McuMgrUpgradeOptions, device: FakeImageDevice) {
        flow = McuMgrUpgrade(image: image, options: options)
        self.device = device
    }

    var info: ConnectionInfo { ConnectionInfo(services: [SMPGATT.service], mtu: mtu) }

    /// Runs until the flow finishes (or `maxSteps` events, a test failure).
    mutating func run(maxSteps: Int = 100_000) -> Result<McuMgrResult, any Error>? {
        perform(flow.handle(.start(info), now: now))
        var steps = 0
        while flow.outcome == nil, steps < maxSteps {
            steps += 1
            if !queue.isEmpty {
                let event = queue.removeFirst()
                perform(flow.handle(event, now: now))
                continue
            }
            let nextTimer = timers.min { $0.value < $1.value || ($0.value == $1.value && $0.key < $1.key) }
            if let at = connectAt, nextTimer.map({ at <= $0.value }) ?? true {
                now = max(now, at)
                connectAt = nil
                if refusedConnections > 0 {
                    refusedConnections -= 1
                    perform(flow.handle(.connectFailed(.connectFailed("le-connection-abort-by-local")), now: now))
                } else {
                    linkUp = true
                    perform(flow.handle(.connected(info), now: now))
                }
                continue
            }
            guard let (name, at) = nextTimer else { break }
            now = max(now, at)
            timers[name] = nil
            perform(flow.handle(.timerFired(TimerID(name)), now: now))
        }
        return flow.outcome
    }

    private mutating func perform(_ list: [FlowAction]) {
        maxInFlight = max(maxInFlight, flow.session.inFlight.count)
        for action in list {
            actions.append(action)
            switch action {
            case let .write(_, bytes, _):
                guard linkUp else { continue }
                writes.append(bytes)
                guard !silent else { continue }
                if let limit = dropsWritesLongerThan, bytes.count > limit { continue }
                if loseFirstReset, bytes.count == 9, bytes[4] == 0, bytes[5] == 0, bytes[7] == 5 {
                    loseFirstReset = false
                    dropLink(.supervisionTimeout)
                    continue
                }
                let before = device.uploadFrames
                let (answers, resets) = device.receive(write: bytes)
                if let limit = disconnectAfterUploadFrames, !disconnectDone, device.uploadFrames >= limit,
                    before < limit
                {
                    disconnectDone = true
                    unconfirmedAtDisconnect = flow.session.unconfirmedBytes
                    if resetAtDisconnect { device.reset() }
                    dropLink(.supervisionTimeout)
                    continue
                }
                if let matches = resetInsteadOfAnswering,
                    answers.contains(where: { (try? SMPHeader(bytes: $0)).map(matches) ?? false })
                {
                    resetInsteadOfAnswering = nil
                    device.reset()
                    dropLink(.remoteTerminated)
                    continue
                }
                for frame in answers { notify(frame) }
                if resets {
                    device.reset()
                    dropLink(.remoteTerminated)
                }
            case let .startTimer(id, d):
                timers[id.name] = now + d
            case let .cancelTimer(id):
                timers[id.name] = nil
            case .disconnect:
                dropLink(.localTerminated)
            case let .connect(after, _):
                connectAt = now + after
            case .subscribe, .report, .finish:
                break
            }
        }
    }

    private mutating func notify(_ frame: [UInt8]) {
        var start = 0
        while start < frame.count {
            let end = min(frame.count, start + mtu - 3)
            defer { notifications += 1 }
            if !lostNotifications.contains(notifications) {
                queue.append(.notification(SMPGATT.characteristic, Array(frame[start..<end])))
            }
            start = end
        }
    }

    private mutating func dropLink(_ reason: DisconnectReason) {
        guard linkUp else { return }
        linkUp = false
        device.linkLost()
        queue.removeAll()
        queue.append(.disconnected(reason))
    }

    /// Reports of one kind, in order.
    var reports: [FlowReport] { actions.compactMap { if case let .report(r) = $0 { return r } else { return nil } } }
    var phases: [FlowPhase] { reports.compactMap { if case let .phase(p) = $0 { return p } else { return nil } } }
    /// The upgrade's typed reports, in order.
    var told: [McuMgrReport] {
        reports.compactMap { if case let .flow(r) = $0 { return r.value(as: McuMgrReport.self) } else { return nil } }
    }
    /// The typed reports that are retries.
    var retries: [McuMgrReport] { told.filter { $0.kind == .retry } }
}
