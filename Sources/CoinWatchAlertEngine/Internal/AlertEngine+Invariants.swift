extension AlertEngine {
    /// Checks that the indexes hold exactly the armed and disarmed sides under their keys, and that
    /// the device table agrees with the books. O(n); for tests.
    func indexesAreConsistent() -> Bool {
        var sidesPerDevice = [UInt32](repeating: 0, count: devices.count)
        for (position, book) in books.enumerated() {
            guard bookIndexes[book.symbol] == position else { return false }
            for direction in AlertDirection.allCases {
                let side = book.side(direction)
                guard side.armed.isValid(), side.disarmed.isValid() else { return false }
                var armed: [IndexEntry] = []
                var disarmed: [IndexEntry] = []
                var active = 0
                for (index, slot) in side.slots.enumerated() {
                    let device = UInt32(index)
                    switch slot.phase {
                    case .off: continue
                    case .awaitingPrice: if book.lastPrice != nil { return false }
                    case .armed: armed.append(IndexEntry(key: slot.key, device: device))
                    case .disarmed:
                        guard slot.reArmKey == side.reArmKey(forKey: slot.key) else { return false }
                        disarmed.append(IndexEntry(key: slot.reArmKey, device: device))
                    }
                    guard index < devices.count, devices[index] != nil, !slot.restored else { return false }
                    sidesPerDevice[index] += 1
                    active += 1
                }
                guard active == side.activeCount, armed.sorted() == side.armed.elements,
                      disarmed.sorted() == side.disarmed.elements
                else { return false }
            }
        }
        for (index, device) in devices.enumerated() {
            if let device {
                guard deviceNumbers[device] == UInt32(index), sidesPerDevice[index] > 0 else { return false }
            }
            guard sidesPerDevice[index] == sideCounts[index] else { return false }
        }
        return bookIndexes.count == books.count && deviceNumbers.count + freeNumbers.count == devices.count
    }
}
