import Diagnostics
import Foundation
import Flashing
import Transport

/// One JSON object per line. Events: `{"type":"phase"|"progress"|"retry"|"note"|"trace"|"decision", "board", "t", ...}`;
/// then one `{"type":"result", ...FlashResult}` per board and, for several boards, the class report
/// (`{"type":"summary", ...}`, see `ClassReport`). The fields are documented in
/// docs/json-and-exit-codes.md and stable.
final class JSONLinesOutput: FlashOutput {
    private struct Event: Encodable {
        var type: String
        var board: String
        var t: Double
        var phase: String?
        var done: Int?
        var total: Int?
        var unit: String?
        /// Progress: units per second measured on the link, and the phase's seconds left at that rate.
        var perSecond: Double?
        var remainingSeconds: Double?
        var message: String?
        var code: String?
    }

    private struct Result: Encodable {
        var type = "result"
        var result: FlashResult
        func encode(to encoder: Encoder) throws {
            try result.encode(to: encoder)
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(type, forKey: .type)
        }
        enum Key: String, CodingKey { case type }
    }

    private func emit<T: Encodable>(_ value: T) {
        guard let text = try? JSONText.line(value) else { return }
        StdOut.write(text + "\n")
    }

    func event(_ e: FlashEvent) {
        var ev = Event(type: "", board: e.board, t: (e.elapsed.seconds * 1e6).rounded() / 1e6)
        switch e.report.worded {
        case .phase(let p): ev.type = "phase"; ev.phase = p.rawValue
        case let .progress(done, total, unit):
            ev.type = "progress"; ev.done = done; ev.total = total; ev.unit = unit.rawValue
            ev.perSecond = e.rate.map { ($0.perSecond * 1000).rounded() / 1000 }
            ev.remainingSeconds = e.rate.map { ($0.remaining.seconds * 1000).rounded() / 1000 }
        case .retry(let m): ev.type = "retry"; ev.message = m
        case .note(let m): ev.type = "note"; ev.message = m
        case .trace(let m): ev.type = "trace"; ev.message = m
        case let .decision(code, m): ev.type = "decision"; ev.code = code; ev.message = m
        case .checkpoint, .flow: return  // `worded` has made every typed report a retry, note or trace
        }
        emit(ev)
    }

    func result(_ r: FlashResult) { emit(Result(result: r)) }

    /// Several boards: `{"type":"class-estimate", ...}` before the first event (see `ClassPreview`).
    func classEstimate(_ preview: ClassPreview) { emit(preview) }

    /// Several boards: the class report, `{"type":"summary","boards":[{board, name, address, result,
    /// path, fallback, seconds, verified, exitCode, error, fix}], "flashed", "failed"}`.
    func finish(_ results: [FlashResult], identities: [String: BoardIdentity]) {
        if results.count > 1 { emit(ClassReport(results, identities: identities)) }
    }
}
