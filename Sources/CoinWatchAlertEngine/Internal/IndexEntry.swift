/// One rule side in an index: its key (a threshold or a re-arm boundary, in ``PriceUnits``) and the
/// device that owns it. The device number breaks ties so entries are unique and removable.
///
/// The key is held as two 64-bit halves rather than an `Int128` so the entry is 8-byte aligned:
/// 24 bytes instead of 32, which is a quarter less memory to move in every chunk shift and sort.
struct IndexEntry: Comparable, Hashable {
    private(set) var high: Int64
    private(set) var low: UInt64
    var device: UInt32

    init(key: Int128, device: UInt32) {
        high = Int64(truncatingIfNeeded: key >> 64)
        low = UInt64(truncatingIfNeeded: key)
        self.device = device
    }

    var key: Int128 {
        get { Int128(high) << 64 | Int128(low) }
        set {
            high = Int64(truncatingIfNeeded: newValue >> 64)
            low = UInt64(truncatingIfNeeded: newValue)
        }
    }

    static func < (lhs: IndexEntry, rhs: IndexEntry) -> Bool {
        if lhs.high != rhs.high { return lhs.high < rhs.high }
        if lhs.low != rhs.low { return lhs.low < rhs.low }
        return lhs.device < rhs.device
    }
}
