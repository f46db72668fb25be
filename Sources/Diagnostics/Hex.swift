/// Hexadecimal text: the one formatter every layer uses for addresses, frame bytes and hashes
/// in messages, traces, reports and JSON.
public enum Hex {
    @usableFromInline static let upper = Array("0123456789ABCDEF".utf8)
    @usableFromInline static let lower = Array("0123456789abcdef".utf8)

    /// `value` in hexadecimal with at least `digits` digits (zero-padded), `0x` first unless
    /// `prefix` is false: `Hex.number(0x47000, digits: 8)` is `0x00047000`,
    /// `Hex.number(0xA, digits: 2, prefix: false)` is `0A`, `Hex.number(0x3c, uppercase: false)` is `0x3c`.
    public static func number<T: BinaryInteger>(
        _ value: T, digits: Int = 0, prefix: Bool = true,
        uppercase: Bool = true
    ) -> String {
        let text = String(value, radix: 16, uppercase: uppercase)
        let padding = String(repeating: "0", count: max(0, digits - text.count))
        return (prefix ? "0x" : "") + padding + text
    }

    /// A 32-bit address as the messages show it: `0x00047000`.
    public static func address(_ value: UInt32) -> String {
        number(value, digits: 8)
    }

    /// `bytes` as two digits each, separated by `separator`: `Hex.bytes([0x22, 0x0A])` is
    /// `220A`, `Hex.bytes([0x22, 0x0A], separator: " ")` is `22 0A`.
    /// (Inlinable: specialised where it is called, with no generic metadata to make at run time.)
    @inlinable
    public static func bytes<S: Sequence<UInt8>>(_ bytes: S, separator: String = "", uppercase: Bool = true) -> String {
        let digits = uppercase ? upper : lower
        let gap = Array(separator.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * (2 + gap.count))
        for b in bytes {
            if !out.isEmpty { out += gap }
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
