// Two threads append to an array behind a Synchronization.Mutex: correct code. ThreadSanitizer reports a race
// inside the withLock bodies on this toolchain, because Mutex locks with atomics and futex calls in the
// uninstrumented runtime library. scripts/sanitize expects a report without the suppressions and none with them.
import Foundation
import Synchronization

let values = Mutex<[Int]>([])
let ready = DispatchSemaphore(value: 0)
let start = DispatchSemaphore(value: 0)
let done = DispatchGroup()
for thread in 0..<2 {
    done.enter()
    Thread {
        ready.signal()
        start.wait()
        for index in 0..<100_000 { values.withLock { $0.append(thread &* index) } }
        done.leave()
    }.start()
}
ready.wait()
ready.wait()
start.signal()
start.signal()
done.wait()
print(values.withLock { $0.count })
