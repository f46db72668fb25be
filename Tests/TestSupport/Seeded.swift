import FirmwareImage

/// The seeded generator of seeded test cases: the project's own SplitMix64, so cases repeat exactly.
public typealias SeededGenerator = SplitMix64
