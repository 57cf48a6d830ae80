/// A bounded dictionary for per-address and per-credential state.
///
/// When full, entries that hold nothing worth keeping (the `isIdle` test: a full token bucket and no open
/// connection) are dropped; if fewer than an eighth could be, further sweeps wait for a second, so a table full of
/// live entries costs a sweep a second at most, not one per insertion.
struct TrackedTable<Value> {
    private(set) var entries: [String: Value] = [:]
    let capacity: Int
    private var nextSweepNanos: Int64 = .min

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    subscript(key: String) -> Value? {
        get { entries[key] }
        set { entries[key] = newValue }
    }

    var count: Int { entries.count }

    /// Whether `key` has room: it is present, or the table is below capacity (after a sweep if it was full).
    mutating func makeRoom(for key: String, nowNanos: Int64, isIdle: (inout Value) -> Bool) -> Bool {
        if entries[key] != nil || entries.count < capacity { return true }
        guard nowNanos >= nextSweepNanos else { return false }
        let before = entries.count
        for candidate in Array(entries.keys) {
            if var value = entries[candidate], isIdle(&value) {
                entries[candidate] = nil
            }
        }
        if before - entries.count < capacity / 8 {
            nextSweepNanos = nowNanos + 1_000_000_000
        }
        return entries.count < capacity
    }
}
