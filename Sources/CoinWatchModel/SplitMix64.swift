/// A small, fast, seedable pseudo-random generator (Steele, Lea and Flood's SplitMix64).
///
/// The simulated market, benchmarks and randomized tests must repeat exactly for
/// a given seed on every run and machine, which the system generator does not
/// promise; SplitMix64 is a fixed arithmetic recipe, so it does.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in the open interval (0, 1), from the top 53 bits.
    public mutating func nextUnitInterval() -> Double {
        (Double(next() >> 11) + 0.5) * 0x1.0p-53
    }
}
