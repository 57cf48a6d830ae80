import CoinWatchModel
import CoinWatchRPC
import Dispatch
import Synchronization

/// Reads a bucket's stream from its first message and hands every value to `handle`: what the bucket holds when
/// `start` is called before it returns, then what other nodes store, on a thread of its own, until `stop`.
///
/// An ordered consumer from the first sequence of a history-1 bucket delivers each key's last value once and then
/// follows live, so a node that starts reads every key's current value without a separate listing.
final class BucketFollower: @unchecked Sendable {
    // @unchecked Sendable: `consumer` is set once in `start` before the thread starts; the rest is immutable,
    // atomic or behind a Mutex.
    let bucket: KeyValueBucket
    let threadName: String
    private let handle: @Sendable (NATSMessage) -> Void
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private var consumer: NATSSubscription?
    /// The stream sequence of the last value read, and how many the consumer said were still to come.
    let lastRead = Atomic<UInt64>(0)
    let pendingAtLastRead = Atomic<UInt64>(0)

    init(bucket: KeyValueBucket, threadName: String, handle: @escaping @Sendable (NATSMessage) -> Void) {
        self.bucket = bucket
        self.threadName = threadName
        self.handle = handle
    }

    /// Subscribes, runs `beforeCatchUp`, hands over every value up to the bucket's last revision (blocking until
    /// then), and starts following on the thread `threadName`.
    func start(beforeCatchUp: () throws(ClusterError) -> Void = {}) throws(ClusterError) {
        let consumer = try bucket.jetStream.orderedConsumer(
            stream: bucket.streamName, subject: bucket.subject(">"), startSequence: 0)
        self.consumer = consumer
        try beforeCatchUp()
        // Catch up: everything up to the bucket's last revision when we subscribed (none when it is empty).
        let last = try bucket.jetStream.lastSequence(stream: bucket.streamName)
        if last > 0 {
            while let message = try consumer.next(timeoutMs: bucket.jetStream.waitMs, jetStream: true) {
                take(message)
                if message.pending == 0 || message.streamSequence >= last { break }
            }
        }
        NamedThread.start(name: threadName) { [self] in
            run(consumer)
            done.signal()
        }
    }

    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        guard let consumer else { return }
        consumer.close()
        done.wait()
    }

    /// The key a message of the bucket sets, as `ClusterLayout.keyToken` made it; nil for another subject.
    func key(of message: NATSMessage) -> String? {
        let prefix = bucket.subject("")
        guard message.subject.hasPrefix(prefix) else { return nil }
        return String(message.subject.dropFirst(prefix.utf8.count))
    }

    /// The text the message's key was made from (`ClusterLayout.text(ofKeyToken:)`); nil when it is not a key.
    func keyText(of message: NATSMessage) -> String? {
        key(of: message).flatMap(ClusterLayout.text(ofKeyToken:))
    }

    /// The device the message's key names, for buckets keyed by device; nil when it names none.
    func device(of message: NATSMessage) -> DeviceID? {
        keyText(of: message).flatMap { try? DeviceID(validating: $0, field: "device_id") }
    }

    private func run(_ consumer: NATSSubscription) {
        while !stopping.load(ordering: .relaxed) {
            do {
                guard let message = try consumer.next(timeoutMs: 200, jetStream: true) else { continue }
                take(message)
            } catch {
                if error.code == .closed { return }
            }
        }
    }

    private func take(_ message: NATSMessage) {
        lastRead.store(message.streamSequence, ordering: .relaxed)
        pendingAtLastRead.store(message.pending, ordering: .relaxed)
        handle(message)
    }
}
