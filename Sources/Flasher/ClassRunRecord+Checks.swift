import Diagnostics
import Foundation

/// The checks of a record read back from disk: what is used as a name or a path.
extension ClassRunRecord {
    /// Each board once, under a name that cannot leave the folder (no `/`, no `..`), for
    /// simulated boards a name bitflash gives them (`sim`, `sim-N`) of a board saved in the
    /// folder; addresses of the form `AA:BB:CC:DD:EE:FF`; results as written. Nil when it holds.
    func problem(simulatedBoards saved: Set<String>?, folder: URL) -> String? {
        guard !boards.isEmpty else { return "it lists no boards" }
        var seen: Set<String> = []
        for row in boards {
            let name = row.board
            if name.isEmpty || name.contains("/") || name.contains("\0") || name == "." || name.contains("..") {
                return "'\(name)' is not the name of a \(saved == nil ? "board" : "simulated board") "
                    + "(a name holds no / and no ..)"
            }
            if let saved {
                guard Self.isSimulatedBoardName(name) else {
                    return "'\(name)' is not the name of a simulated board (bitflash names them sim, sim-1, sim-2, …)"
                }
                guard saved.contains(name) else { return "no simulated board '\(name)' in \(folder.path)" }
            }
            guard seen.insert(name).inserted else { return "it names the board '\(name)' twice" }
            if let address = row.address, !Self.isAddress(address) {
                return "'\(address)' is not a Bluetooth address (AA:BB:CC:DD:EE:FF), for \(name)"
            }
            guard ["ok", "unverified", "failed"].contains(row.result) else {
                return "the result '\(row.result)' of \(name) is none of ok, unverified, failed"
            }
        }
        return nil
    }

    /// A decoding failure in words, without Foundation's text.
    static func decodingText(_ error: DecodingError) -> String {
        func at(_ path: [any CodingKey]) -> String {
            path.isEmpty
                ? "" : " at " + path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let c) where c.codingPath.isEmpty: return "not valid JSON"
        case .dataCorrupted(let c): return "a value\(at(c.codingPath)) is not valid"
        case .keyNotFound(let key, let c): return "the field '\(key.stringValue)'\(at(c.codingPath)) is missing"
        case .typeMismatch(_, let c), .valueNotFound(_, let c): return "a field\(at(c.codingPath)) has the wrong type"
        @unknown default: return "not valid JSON"
        }
    }

    /// `AA:BB:CC:DD:EE:FF`, six hexadecimal pairs.
    public static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    /// True for a name bitflash gives a simulated board: `sim`, or `sim-N` with N from 1, no leading zero.
    public static func isSimulatedBoardName(_ name: String) -> Bool {
        if name == "sim" { return true }
        guard name.hasPrefix("sim-"), let n = Int(name.dropFirst(4)), n >= 1 else { return false }
        return name == "sim-\(n)"
    }
}

/// Why a class run's record cannot be used or kept.
public enum ClassRunRecordError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The record at `path` is empty, corrupt or not valid (`reason`).
    case unusable(path: String, reason: String)
    /// The record could not be written to `path`.
    case cannotSave(path: String, reason: String)

    public var description: String {
        switch self {
        case let .unusable(path, reason):
            return
                "\(path) is not a record of a class run bitflash can use: \(reason); delete it and flash the class again"
        case let .cannotSave(path, reason):
            return "cannot save the record of this class run to \(path): \(reason)"
        }
    }
}

extension ClassRunRecordError: DomainError {
    /// A record that cannot be used is unreadable; one that cannot be written is unwritable.
    public var failureKind: FailureKind {
        switch self {
        case .unusable: return .unreadable
        case .cannotSave: return .unwritable
        }
    }
}
