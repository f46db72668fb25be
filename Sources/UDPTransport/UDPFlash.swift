import Flashing
import McuMgr
import Transport

/// A full McuMgr update over SMP/UDP: the same `SessionFlow` (forced to the full path) that a
/// Bluetooth board gets, driven by `AsyncFlowDriver` on the real clock.
public enum UDPFlash {
    /// The McuMgr options that suit UDP, from `base`: one whole frame per datagram (no SMP
    /// reassembly), and a reset that is over when the server answers a probe again.
    public static func options(from base: FlashOptions) -> FlashOptions {
        var o = base
        o.mode = .full
        o.mcumgr.useReassembly = false
        // No link drops at a reset on UDP: wait a moment for the device to go down, then
        // probe (`connect`) until it answers after its swap.
        o.mcumgr.resetDisconnectTimeout = .seconds(1)
        o.mcumgr.estimatedSwapTime = .zero
        o.mcumgr.reconnectDelay = .milliseconds(500)
        return o
    }

    /// Flashes the board at `endpoint` with `plan`'s MCUboot image. `onEvent` receives every
    /// report with real elapsed time. Never throws: a failure is the result's `error`.
    /// `connectTimeout` bounds the first probe (is anybody there?); `reconnectTimeout` bounds each
    /// wait for the device after its reset (MCUboot's swap of a large image takes seconds).
    public static func run(
        plan: FlashPlan, options: FlashOptions = FlashOptions(), endpoint: UDPEndpoint,
        connectTimeout: Duration = .seconds(10), reconnectTimeout: Duration = .seconds(60),
        frameSize: Int = UDPSMPTransport.defaultFrameSize,
        onEvent: (@Sendable (FlashEvent) -> Void)? = nil
    ) async -> FlashResult {
        let name = "udp:\(endpoint)"
        let clock = ContinuousClock()
        let started = clock.now
        let transport: UDPSMPTransport
        do {
            transport = try await UDPSMPTransport.open(endpoint, frameSize: frameSize)
        } catch {
            return FlashResult(board: name, unreached: error, seconds: started.duration(to: clock.now).seconds)
        }
        let result = await run(
            plan: plan, options: options, transport: transport, name: name, connectTimeout: connectTimeout,
            reconnectTimeout: reconnectTimeout, started: started, clock: clock, onEvent: onEvent)
        await transport.close()
        return result
    }

    private static func run(
        plan: FlashPlan, options: FlashOptions, transport: UDPSMPTransport, name: String,
        connectTimeout: Duration, reconnectTimeout: Duration,
        started: ContinuousClock.Instant, clock: ContinuousClock,
        onEvent: (@Sendable (FlashEvent) -> Void)?
    ) async -> FlashResult {
        onEvent?(FlashEvent(board: name, elapsed: .zero, report: .phase(.connecting)))
        let info: ConnectionInfo
        do {
            info = try await transport.connect(timeout: connectTimeout)
        } catch {
            return FlashResult(board: name, unreached: error, seconds: started.duration(to: clock.now).seconds)
        }
        // The driver's operation timeout bounds writes (immediate on UDP) and reconnects.
        let driver = AsyncFlowDriver(transport: transport, clock: clock, operationTimeout: reconnectTimeout)
        let outcome: Result<SessionOutcome, any Error>
        let meter = ProgressRateMeter()
        // Kept after the run: a failed session's result says what it did before it failed.
        var flow = SessionFlow(plan: plan, options: Self.options(from: options))
        do {
            let o = try await driver.run(
                &flow, connection: info,
                onReport: { report, t in onEvent?(meter.event(board: name, elapsed: t, report: report)) })
            outcome = .success(o)
        } catch {
            outcome = .failure(error)
        }
        return FlashResult(
            board: name, outcome: outcome, seconds: started.duration(to: clock.now).seconds, progress: flow.progress)
    }
}
