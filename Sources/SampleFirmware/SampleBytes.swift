import FirmwareImage

/// Deterministic byte sources for the sample images (no system randomness).
enum SampleBytes {
    /// `count` pseudo-random bytes that depend only on `seed` (SplitMix64 seeded by FNV-1a).
    static func fill(count: Int, seed: String) -> [UInt8] {
        var state: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in seed.utf8 { state = (state ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        var rng = SplitMix64(seed: state)
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count {
            let z = rng.next()
            for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: z >> (8 * UInt64(i)))) }
        }
        return Array(out.prefix(count))
    }
}
