import Testing
@testable import CoinWatchPush

struct FIFOQueueTests {
    @Test func elementsLeaveInOrderAndPrependedOnesFirst() {
        var queue = FIFOQueue<Int>()
        #expect(queue.popFirst() == nil)
        queue.append(contentsOf: 1...3)
        #expect(queue.popFirst() == 1)
        queue.prepend(0)
        queue.prepend(-1)
        queue.append(4)
        #expect(queue.count == 5)
        #expect(queue.removeAll() == [-1, 0, 2, 3, 4])
        #expect(queue.isEmpty)
    }

    @Test func aLongRunMatchesAnArray() {
        var queue = FIFOQueue<Int>()
        var model: [Int] = []
        var generator = SystemRandomNumberGenerator()
        var next = 0
        for _ in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                queue.append(next)
                model.append(next)
                next += 1
            case 5:
                queue.prepend(next)
                model.insert(next, at: 0)
                next += 1
            default:
                #expect(queue.popFirst() == (model.isEmpty ? nil : model.removeFirst()))
            }
            #expect(queue.count == model.count)
        }
        #expect(queue.removeAll() == model)
    }
}
