import Foundation
import SMP
import UDPTransport
import Transport

/// One slot as every client sees it: the fields the interop tests compare.
struct SlotView: Codable, Hashable, CustomStringConvertible {
    var slot: Int
    var hash: String
    var active: Bool
    var confirmed: Bool
    var pending: Bool
    var permanent: Bool

    init(slot: Int, hash: String, active: Bool, confirmed: Bool, pending: Bool, permanent: Bool) {
        (self.slot, self.hash, self.active, self.confirmed, self.pending, self.permanent) = (
            slot, hash, active, confirmed, pending, permanent
        )
    }

    init(_ s: ImageSlotState) {
        self.init(
            slot: s.slot, hash: (s.hash ?? []).map { String(format: "%02x", $0) }.joined(),
            active: s.active, confirmed: s.confirmed, pending: s.pending, permanent: s.permanent)
    }

    var description: String {
        "slot \(slot) \(hash.prefix(16))…" + (active ? " active" : "") + (confirmed ? " confirmed" : "")
            + (pending ? " pending" : "") + (permanent ? " permanent" : "")
    }

    /// Reads the slots from the JSON line `SLOTS <json>` a helper script printed.
    static func fromScript(_ stdout: String) -> [SlotView]? {
        guard let line = stdout.split(separator: "\n").last(where: { $0.hasPrefix("SLOTS ") }) else { return nil }
        return try? JSONDecoder().decode([SlotView].self, from: Data(line.dropFirst(6).utf8)).sorted {
            $0.slot < $1.slot
        }
    }
}

struct NoAnswerInTime: Error {}

/// Bitflash's own view: an image state read with the UDP client transport (bounded).
func bitflashSlots(at endpoint: UDPEndpoint, within timeout: Duration = .seconds(120)) async throws -> [SlotView] {
    let transport = try await UDPSMPTransport.open(endpoint, probeInterval: .milliseconds(100))
    do {
        let slots = try await withThrowingTaskGroup(of: [SlotView].self) { group in
            group.addTask {
                _ = try await transport.connect(timeout: timeout)
                var answers = transport.notifications(of: SMPGATT.characteristic).makeAsyncIterator()
                for attempt in 0..<5 {
                    let sequence = UInt8(40 + attempt)
                    let request = try SMPFrame(request: ImageStateReadRequest(), sequence: sequence).encoded()
                    try await transport.write(request, to: SMPGATT.characteristic, kind: .command, timeout: .seconds(1))
                    while let bytes = await answers.next() {
                        let frame = try SMPFrame(bytes: bytes)
                        guard frame.header.sequence == sequence else { continue }
                        return try frame.response(as: ImageStateResponse.self).images.map(SlotView.init).sorted {
                            $0.slot < $1.slot
                        }
                    }
                }
                throw NoAnswerInTime()
            }
            group.addTask {
                // Watchdog: gives up on an answer that never comes; the read ends on the answer.
                try await Task.sleep(for: timeout + .seconds(5))
                throw NoAnswerInTime()
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw NoAnswerInTime() }
            return first
        }
        await transport.close()
        return slots
    } catch {
        await transport.close()
        throw error
    }
}
