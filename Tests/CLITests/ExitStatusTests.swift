@testable import Commands
import Diagnostics
import Flashing
import Foundation
import Testing
import TestSupport

/// The command line's one table from failure kinds (the library's words) to exit statuses, and
/// how one board's result and a whole run end. (Swift Testing has an `ExitStatus` of its own,
/// hence `Commands.ExitStatus` here.)
@Suite struct ExitStatusTests {
    typealias Status = Commands.ExitStatus
    struct Plain: Error {}
    struct Kinded: DomainError { var failureKind: FailureKind }
    static let reason = FlashReason(code: "runtime-matches", message: "runtime matches")

    @Test("the codes are the documented sysexits-style values; only 0 and 3 are successes")
    func documentedCodes() {
        #expect(Status.allCases.map(\.rawValue) == [0, 2, 3, 64, 65, 66, 69, 70, 73, 74, 75, 76, 77, 130, 143])
        #expect(Status.allCases.filter(\.succeeded) == [.ok, .okAfterFallback])
    }

    @Test("every failure kind maps to a failure status, and the table covers the documented failures")
    func everyKindIsAFailureStatus() {
        let statuses = FailureKind.allCases.map { Status($0) }
        #expect(statuses.allSatisfy { !$0.succeeded && $0 != .writtenUnverified })
        #expect(
            Set(statuses) == [
                .usage, .badFirmware, .cannotRead, .boardNotFound, .internalError, .cannotWrite, .flashFailed,
                .bluetoothUnavailable, .servicesNotResolved, .pairingRefused
            ])
        #expect(Status(.heldElsewhere) == .bluetoothUnavailable)
        #expect(Status(.stackViolation) == .servicesNotResolved)
    }

    @Test("an error's kind decides its status; the command line's own errors keep theirs; others are 74")
    func statusOfAnError() {
        #expect(Status.of(Kinded(failureKind: .pairingRefused)) == .pairingRefused)
        #expect(Status.of(CLIError(.usage, "bad option")) == .usage)
        #expect(Status.of(Plain()) == .flashFailed)
        #expect(Status.of(Plain(), otherwise: .internalError) == .internalError)
    }

    @Test("a run ends with its first failure's status, else 2 for any unread board, else 3 after a fallback")
    func runStatusFromResults() {
        let ok = FlashResult(board: "a", path: .partial, reason: Self.reason, verified: true)
        let fellBack = FlashResult(board: "b", path: .full, reason: Self.reason, fallback: true, verified: true)
        let unread = FlashResult(board: "c", path: .partial, reason: Self.reason)
        let unreachable = FlashResult(board: "d", unreached: Kinded(failureKind: .boardUnavailable), seconds: 1)
        #expect(Status(results: [ok]) == .ok)
        #expect(Status(results: [ok, fellBack]) == .okAfterFallback)
        #expect(Status(results: [fellBack, unread]) == .writtenUnverified)
        #expect(Status(results: [ok, unread, unreachable]) == .boardNotFound)
        #expect(Status(unread) == .writtenUnverified)
    }

    @Test("the documented table of failure kinds is the command line's table, kind for kind")
    func documentedKindTableIsTheCode() throws {
        let text = try String(
            contentsOf: Corpus.repoRoot.appendingPathComponent("docs/json-and-exit-codes.md"), encoding: .utf8)
        var documented: [String: Int32] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 2, let code = Int32(cells[1]) else { continue }
            for name in cells[0].split(separator: ",") {
                documented[name.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")] = code
            }
        }
        let own = Dictionary(uniqueKeysWithValues: FailureKind.allCases.map { ("\($0)", Status($0).rawValue) })
        #expect(documented == own)
    }
}
