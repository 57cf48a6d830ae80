/// Puts and deletes applied together by `Database.write(_:sync:)`: readers see either none or all of them.
///
/// A plain value, so it can be built on any thread, passed between tasks and inspected in tests; LevelDB's own
/// batch object only exists for the duration of the write. Later operations on the same key win.
public struct WriteBatch: Hashable, Sendable {
    /// One recorded change.
    public enum Operation: Hashable, Sendable {
        case put(key: [UInt8], value: [UInt8])
        case delete(key: [UInt8])
    }

    /// The recorded changes, in the order they will be applied.
    public private(set) var operations: [Operation] = []

    public init() {}

    /// Records that `key` is to hold `value`.
    public mutating func put(_ key: [UInt8], _ value: [UInt8]) {
        operations.append(.put(key: key, value: value))
    }

    /// Records that `key` is to be removed (removing an absent key is not an error).
    public mutating func delete(_ key: [UInt8]) {
        operations.append(.delete(key: key))
    }

    /// Appends another batch's changes after this one's.
    public mutating func append(contentsOf other: WriteBatch) {
        operations.append(contentsOf: other.operations)
    }

    /// Forgets every recorded change, so the batch can be reused.
    public mutating func removeAll(keepingCapacity: Bool = false) {
        operations.removeAll(keepingCapacity: keepingCapacity)
    }

    /// The number of recorded changes.
    public var count: Int {
        operations.count
    }

    public var isEmpty: Bool {
        operations.isEmpty
    }
}
