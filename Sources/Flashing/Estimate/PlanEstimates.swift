import LinkModel

/// The estimates of a set of paths over each standard link profile, as plan mode prints them.
public struct ProfileEstimates: Sendable, Equatable, Codable {
    /// The profile's name (`linux-default`, `device-requested`, `fast`).
    public var profile: String
    public var connectionIntervalMilliseconds: Double
    /// Each path's whole estimate in seconds, fastest first.
    public var estimates: [PathEstimate]

    /// The fastest path over this profile.
    public var fastest: EstimatedPath? { estimates.first?.path }
}

/// Estimates over the standard link profiles.
public enum PlanEstimates {
    /// Each path over each of `profiles`, from a board not yet connected (connection setup
    /// and the memory-map read included).
    public static func byProfile(
        _ estimators: [any PathEstimator], board: BoardCosts,
        profiles: [LinkProfile] = LinkProfile.named
    ) -> [ProfileEstimates] {
        profiles.map { p in
            let context = EstimateContext(link: .profile(p), board: board, includesMemoryMapRead: true)
            return ProfileEstimates(
                profile: p.name, connectionIntervalMilliseconds: Double(p.connectionIntervalMicroseconds) / 1000,
                estimates: estimators.map { $0.estimate(context) }.sorted { $0.seconds < $1.seconds })
        }
    }
}
