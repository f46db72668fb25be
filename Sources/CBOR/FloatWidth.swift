/// Conversions between `Double` and IEEE 754 half precision (binary16) bit
/// patterns, written out so the module needs no `Float16` support.
enum FloatWidth {
    /// The binary16 bits of `d` when `d` is exactly representable in half
    /// precision (NaN maps to the canonical quiet NaN `0x7E00`).
    static func halfBits(exactly d: Double) -> UInt16? {
        if d.isNaN { return 0x7E00 }
        let sign: UInt16 = d.sign == .minus ? 0x8000 : 0
        if d.isInfinite { return sign | 0x7C00 }
        let m = d.magnitude
        if m == 0 { return sign }
        let e = Int(m.exponent)
        if e > 15 { return nil }
        if e >= -14 {
            // Normal: 1.f × 2^e with 10 fraction bits.
            let scaled = (m / Double(sign: .plus, exponent: e, significand: 1) - 1) * 1024
            guard scaled == scaled.rounded(.towardZero) else { return nil }
            return sign | UInt16(e + 15) << 10 | UInt16(scaled)
        }
        // Subnormal: n × 2^-24 with n < 1024.
        let n = m * Double(sign: .plus, exponent: 24, significand: 1)
        guard n == n.rounded(.towardZero), n < 1024 else { return nil }
        return sign | UInt16(n)
    }

    /// The value of binary16 bits.
    static func double(fromHalf bits: UInt16) -> Double {
        let negative = bits & 0x8000 != 0
        let exponent = Int((bits >> 10) & 0x1F)
        let fraction = Double(bits & 0x3FF)
        let magnitude: Double
        switch exponent {
        case 0: magnitude = fraction * Double(sign: .plus, exponent: -24, significand: 1)
        case 31: magnitude = fraction == 0 ? .infinity : .nan
        default: magnitude = (1 + fraction / 1024) * Double(sign: .plus, exponent: exponent - 15, significand: 1)
        }
        return negative ? -magnitude : magnitude
    }
}
