// Two threads increment a shared counter without any synchronisation: a real race. scripts/sanitize expects
// ThreadSanitizer to report it even with the suppressions, which proves they do not hide races in plain code.
import Foundation

final class Counter: @unchecked Sendable {
    var value = 0
}

let counter = Counter()
let ready = DispatchSemaphore(value: 0)
let start = DispatchSemaphore(value: 0)
let done = DispatchGroup()
for _ in 0..<2 {
    done.enter()
    Thread {
        ready.signal()
        start.wait()
        for _ in 0..<200_000 { counter.value += 1 }
        done.leave()
    }.start()
}
// Both threads run before either starts counting, so their loops overlap.
ready.wait()
ready.wait()
start.signal()
start.signal()
done.wait()
print(counter.value)
