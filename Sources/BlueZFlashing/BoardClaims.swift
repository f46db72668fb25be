import Synchronization

/// Which board each query of one class reached: two queries (a name and an address, two parts
/// of one name) that reach the same board must not flash it twice, in two sessions at once or one
/// after the other. The first query to connect to an address claims it; a later one is told
/// which query has it, and whether that query's session still holds the link (then the later
/// one must leave the link alone: closing it would disconnect the claimant's board).
final class BoardClaims: Sendable {
    private struct Claim {
        var query: String
        var holdsLink: Bool
    }
    private let claims = Mutex<[String: Claim]>([:])

    /// Claims `address` for `query`: nil when it is now `query`'s (or already was), else the
    /// query that has it and whether that query still holds the link.
    func claim(_ address: String, by query: String) -> (query: String, holdsLink: Bool)? {
        claims.withLock { claims in
            if let other = claims[address], other.query != query { return (other.query, other.holdsLink) }
            claims[address] = Claim(query: query, holdsLink: true)
            return nil
        }
    }

    /// `address`'s session has closed its link.
    func released(_ address: String) {
        claims.withLock { $0[address]?.holdsLink = false }
    }
}
