import Flashing
import Foundation
import Transport

/// One board as the page shows it: who it is, where its flash stands, how it ended. A value that
/// the flasher's events and result update (`apply`), and that the page receives as JSON.
public struct BoardView: Codable, Sendable, Equatable {
    /// Where the board's flash stands.
    public enum Status: String, Codable, Sendable {
        /// In range, not chosen for a flash (or not flashed yet).
        case idle
        /// Chosen for the flash that is running; its session has not started.
        case waiting
        /// Its session runs.
        case working
        /// Its session ended well; its result (verified or not) is not in yet. A simulated class
        /// hands over its results once every board has ended.
        case finished
        /// Read back running the new program (or found up to date).
        case verified
        /// Written but not read back running it (`FlashVerification.unverified`).
        case unverified
        case failed
    }

    public var name: String
    public var address: String
    /// What its advertisement tells (`application`, `pairing`, `bootloader`), or `simulated`.
    public var mode: String
    /// The signal strength of its last advertisement, in dBm (nil: not known).
    public var signal: Int?
    public var status: Status = .idle
    /// The phase its session is in (`connecting`, `partial`, `full upload`, `verify` …).
    public var phase: String?
    /// The path: `partial`, `McuMgr`, `Nordic DFU`, `full update` (before its protocol is
    /// known), `up to date`.
    public var path: String?
    /// Work done in the current phase, of `total` (bytes or blocks).
    public var done = 0
    public var total = 0
    /// Its time left in the current phase at the measured rate, in seconds (nil: not known yet).
    public var eta: Double?
    /// The measured rate, in words (`4.1 kB/s`, `38 blocks/s`).
    public var rate: String?
    /// Retries so far.
    public var retries = 0
    /// What went wrong, and what to do (failed boards).
    public var reason: String?
    /// Why a written board is not verified.
    public var note: String?
    /// The flash's time in seconds once it ended (modelled on simulated boards).
    public var seconds: Double?

    public init(name: String, address: String, mode: String, signal: Int? = nil) {
        self.name = name
        self.address = address
        self.mode = mode
        self.signal = signal
    }

    /// Whether the board's flash has ended.
    public var ended: Bool { status == .verified || status == .unverified || status == .failed }

    /// The board chosen for a new flash: its last flash forgotten.
    public mutating func queue() {
        self = BoardView(name: name, address: address, mode: mode, signal: signal)
        status = .waiting
    }

    /// One event of the board's session.
    public mutating func apply(_ event: FlashEvent) {
        if !ended, status != .finished { status = .working }
        switch event.report {
        case .phase(.done):
            // Only a session that succeeded reports `done` (SessionFlow.succeed).
            status = .finished
            phase = nil
            eta = nil
            if total > 0 { done = total }
        case let .phase(phase):
            self.phase = phase.rawValue
            done = 0
            total = 0
            eta = nil
            if phase == .partial { path = "partial" }
            if phase == .upload, path == nil || path == "partial" { path = "full update" }
        case let .progress(done, total, unit):
            self.done = done
            self.total = total
            eta = event.rate.map { $0.remaining.seconds }
            rate = event.rate.map { Self.rate($0.perSecond, unit) }
        case .retry:
            retries += 1
        case let .flow(r):
            if r.kind == .retry { retries += 1 }
        case .trace, .note, .decision, .checkpoint:
            break
        }
    }

    /// The board's result: how its flash ended.
    public mutating func apply(_ result: FlashResult) {
        switch result.verification {
        case .verified, .dryRun: status = .verified
        case .unverified: status = .unverified
        case .failed: status = .failed
        }
        if result.error != nil { status = .failed }
        path = Self.path(result) ?? path
        phase = nil
        eta = nil
        reason = result.error
        note = result.verificationNote
        retries = result.retries
        seconds = result.seconds
        if status != .failed, total > 0 { done = total }
    }

    /// `partial`, `McuMgr`, `Nordic DFU`, `up to date`; nil when no path was taken.
    static func path(_ result: FlashResult) -> String? {
        switch result.path {
        case .partial?: return "partial"
        case .upToDate?: return "up to date"
        case .full?:
            switch result.fullPath {
            case .mcumgr?: return "McuMgr"
            case .nordic?: return "Nordic DFU"
            case nil: return "full update"
            }
        case nil: return nil
        }
    }

    static func rate(_ perSecond: Double, _ unit: ProgressUnit) -> String {
        switch unit {
        case .bytes: return String(format: "%.1f kB/s", perSecond / 1000)
        case .blocks: return String(format: "%.0f blocks/s", perSecond)
        }
    }
}
