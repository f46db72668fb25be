/// SplitMix64 (Steele, Lea and Flood, 2014): a small, fast, seedable generator.
///
/// Seeded shuffles of the hex writer, the sample images and the link model's fault plan all
/// draw from one of these, so a seed fixes a run on every platform.
/// It is not cryptographic and must not be used for anything but simulation.
public struct SplitMix64: RandomNumberGenerator, Sendable, Equatable, Codable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in [0, 1) with 53 bits of precision.
    public mutating func nextUnitDouble() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// True with probability `p` (0 never draws a number-dependent `true`, 1 always does).
    public mutating func chance(_ p: Double) -> Bool {
        guard p > 0 else { return false }
        return nextUnitDouble() < p
    }
}
