// Two threads write a shared counter with nothing ordering the writes: a real race. scripts/sanitize expects
// ThreadSanitizer to report it even with the suppressions, which proves they do not hide races in plain code.
//
// The second write waits for the first through a relaxed atomic flag, which orders nothing for ThreadSanitizer, so the
// two writes have no happens-before between them and the first is still in the shadow memory when the second comes:
// it is reported on every run, however busy the machine. (Two threads counting at once were missed now and then, and
// most of the time on a machine busy with other work, where their loops rarely met.)
import Foundation
import Synchronization

final class Counter: @unchecked Sendable {
    var value = 0
}

let counter = Counter()
let written = Atomic<Bool>(false)
let done = DispatchGroup()
done.enter()
Thread {
    counter.value += 1
    written.store(true, ordering: .relaxed)
    done.leave()
}.start()
done.enter()
Thread {
    while !written.load(ordering: .relaxed) {}
    counter.value += 1
    done.leave()
}.start()
done.wait()
print(counter.value)
