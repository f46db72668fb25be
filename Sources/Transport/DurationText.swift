extension Duration {
    /// A duration for a message a person reads: "250 ms" under a second, else seconds to one
    /// decimal without a trailing zero: "1.8 s", "2 s", "12.5 s". Swift's own description
    /// ("1.760446 seconds") carries more digits than anyone can use.
    public var readableText: String {
        let (s, atto) = components
        let ms = s * 1000 + atto / 1_000_000_000_000_000
        if ms < 1000 { return "\(ms) ms" }
        let tenths = (ms + 50) / 100
        return tenths % 10 == 0 ? "\(tenths / 10) s" : "\(tenths / 10).\(tenths % 10) s"
    }

    /// "1 s", "250 ms": whole seconds, else milliseconds; short, for messages about timeouts.
    public var shortText: String {
        let (s, atto) = components
        let ms = s * 1000 + atto / 1_000_000_000_000_000
        if ms % 1000 == 0 { return "\(ms / 1000) s" }
        return "\(ms) ms"
    }
}
