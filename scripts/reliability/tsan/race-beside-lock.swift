// A real race on a plain property, where one side happens to run inside a Mutex.withLock body. The suppression
// matches the top frame of either stack, so it hides this race too: the one blind spot scripts/sanitize
// documents, and checks, so that a toolchain that changes the behaviour is noticed.
import Foundation
import Synchronization

final class Shared: @unchecked Sendable {
    let lock = Mutex<Int>(0)
    var unprotected = 0
}

let shared = Shared()
let ready = DispatchSemaphore(value: 0)
let start = DispatchSemaphore(value: 0)
let done = DispatchGroup()
for thread in 0..<2 {
    done.enter()
    Thread {
        ready.signal()
        start.wait()
        for _ in 0..<200_000 {
            if thread == 0 {
                shared.lock.withLock { _ in shared.unprotected += 1 }
            } else {
                shared.unprotected += 1
            }
        }
        done.leave()
    }.start()
}
ready.wait()
ready.wait()
start.signal()
start.signal()
done.wait()
print(shared.unprotected)
