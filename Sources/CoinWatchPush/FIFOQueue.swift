/// A first-in first-out queue with O(1) amortised `append` and `popFirst`, and `prepend` for the rare element
/// that must go back to the front.
///
/// An array with a moving head: popped slots are released at once and the dead prefix is dropped once it is at
/// least half of the storage, so memory follows the live count.
public struct FIFOQueue<Element> {
    private var storage: [Element?] = []
    private var head = 0

    public init() {}

    public var count: Int { storage.count - head }

    public var isEmpty: Bool { head == storage.count }

    public mutating func append(_ element: Element) {
        storage.append(element)
    }

    public mutating func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        for element in elements { storage.append(element) }
    }

    /// Puts `element` back in front of everything queued.
    public mutating func prepend(_ element: Element) {
        if head > 0 {
            head -= 1
            storage[head] = element
        } else {
            storage.insert(element, at: 0)
        }
    }

    public mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        storage[head] = nil
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.count <= 4096)
            head = 0
        } else if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes every element, returning them in order.
    public mutating func removeAll() -> [Element] {
        let all = storage[head...].map { $0! }
        storage = []
        head = 0
        return all
    }
}
