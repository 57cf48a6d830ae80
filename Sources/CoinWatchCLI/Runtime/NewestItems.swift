/// The newest `limit` items appended since the last `drain()`, oldest first: what a follower keeps for a reader
/// that fell behind.
///
/// Dropping the oldest item of a full `Array` with `removeFirst()` moves every other item, so a reader that lags a
/// stream by 10,000 items made each new item cost 10,000 moves, and the lag grew. Dropped items are only counted
/// here, and cut off once as many are dropped as kept: each item costs a bounded amount of work.
struct NewestItems<Item> {
    let limit: Int
    private var items: [Item] = []
    /// How many items at the front of `items` are dropped.
    private var dropped = 0

    init(limit: Int) {
        precondition(limit > 0, "NewestItems keeps at least one item")
        self.limit = limit
    }

    /// The items kept.
    var count: Int { items.count - dropped }

    /// Appends `item`, dropping the oldest when `limit` are kept; true when it is the only one kept (the reader has
    /// taken everything before it).
    mutating func append(_ item: Item) -> Bool {
        if count >= limit {
            dropped += 1
            if dropped >= limit {
                items.removeFirst(dropped)
                dropped = 0
            }
        }
        items.append(item)
        return count == 1
    }

    /// Takes every item kept, oldest first.
    mutating func drain() -> [Item] {
        defer {
            items.removeAll(keepingCapacity: true)
            dropped = 0
        }
        return dropped == 0 ? items : Array(items[dropped...])
    }
}
