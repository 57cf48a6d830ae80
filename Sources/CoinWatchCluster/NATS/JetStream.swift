import CNATS
import Dispatch
import Synchronization

/// JetStream over one `NATSConnection`: streams, publishes with an acknowledgement (and with a condition on a
/// subject's last sequence), ordered consumers read on CoinWatch's threads, and key-value buckets.
///
/// Every call here that waits for the server (`ensureStream`, `publish`, `keyValue`, the bucket's reads and writes)
/// blocks its thread for up to the context's wait: they run on CoinWatch's cluster threads (`cw-cluster`,
/// `cw-cluster-pub`, the settings sync thread), never on an event loop.
///
/// nats.c's JetStream context and KV handles are thread-safe (they take their own locks and retain the
/// connection). The asynchronous publish's callbacks run on the library's reply thread; they only count (atomics)
/// — the contract for `jsPubAckErrHandler`: "the callback is invoked … when an error is returned by the server or
/// if the library has timed-out waiting for an acknowledgment", and nothing may be published from it.
final class JetStream: @unchecked Sendable {
    // @unchecked Sendable: the handles are immutable after init and thread-safe in nats.c; counters are atomic.

    let connection: NATSConnection
    let handle: OpaquePointer
    /// How long a call waits for the server before `timeout`.
    let waitMs: Int64
    let counters: AsyncPublishCounters
    /// A second context for `publishAll`: its acknowledgement handler records each message's own outcome.
    private let batchHandle: OpaquePointer
    private let batchAcks: BatchAcks
    /// `publishAll` is called by one thread at a time (its outcomes are keyed by subject for one batch).
    private let batchLock = Mutex(())

    /// Outcomes of the asynchronous publishes, written by nats.c's reply thread.
    final class AsyncPublishCounters: Sendable {
        let acknowledged = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
    }

    /// The batch `publishAll` is waiting for: its messages by address (index in the batch) and their outcomes,
    /// written by nats.c's reply thread, one signal per outcome. A message's address identifies it: the handler
    /// frees the message only after it looked the address up, so no later message can reuse the address while an
    /// earlier one's late acknowledgement (after its batch gave up waiting) can still come; those are ignored.
    final class BatchAcks: Sendable {
        struct State {
            var waiting: [Int: Int] = [:]
            var outcomes: [Int: Result<UInt64, ClusterError>] = [:]
        }
        let state = Mutex(State())
        let arrived = DispatchSemaphore(value: 0)
    }

    init(connection: NATSConnection, waitMs: Int64 = 5_000, maxPendingAsync: Int64 = 4_096) throws(ClusterError) {
        self.connection = connection
        self.waitMs = waitMs
        let counters = AsyncPublishCounters()
        self.counters = counters
        handle = try Self.context(connection, waitMs: waitMs, maxPendingAsync: maxPendingAsync, closure: counters) {
            _, message, ack, error, closure in
            defer { natsMsg_Destroy(message) }
            guard let closure else { return }
            let counters = Unmanaged<AsyncPublishCounters>.fromOpaque(closure).takeUnretainedValue()
            if error != nil || ack == nil {
                counters.failed.add(1, ordering: .relaxed)
            } else {
                counters.acknowledged.add(1, ordering: .relaxed)
            }
        }
        let batchAcks = BatchAcks()
        self.batchAcks = batchAcks
        batchHandle = try Self.context(connection, waitMs: waitMs, maxPendingAsync: maxPendingAsync, closure: batchAcks) {
            _, message, ack, failure, closure in
            defer { natsMsg_Destroy(message) }
            guard let closure, let message else { return }
            let acks = Unmanaged<BatchAcks>.fromOpaque(closure).takeUnretainedValue()
            let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? "?"
            let outcome: Result<UInt64, ClusterError>
            if let failure {
                outcome = .failure(JetStream.publishError(failure.pointee.Err, failure.pointee.ErrCode, subject: subject))
            } else if let ack {
                outcome = .success(ack.pointee.Sequence)
            } else {
                outcome = .failure(ClusterError(code: .failed, message: "publishing on \(subject): no acknowledgement"))
            }
            let counted = acks.state.withLock { state -> Bool in
                guard let index = state.waiting.removeValue(forKey: Int(bitPattern: message)) else { return false }
                state.outcomes[index] = outcome
                return true
            }
            if counted { acks.arrived.signal() }
        }
    }

    /// A JetStream context whose asynchronous publishes report to `handler` with `closure`: "invoked for every
    /// asynchronous published message, either as a positive result, or with the error encountered when publishing
    /// that message" (jsOptions.PublishAsync.AckHandler), on the library's reply thread. The handler owns the
    /// message it is given: "The user is responsible for destroying the message ... it is recommended to always
    /// call natsMsg_Destroy at the end of the function" (jsPubAckHandler); the library sets its own pointer to NULL
    /// after the call, so a handler that only records leaks every published message. `closure` is retained for the
    /// context's life, like the connection's event box: released never (one per context).
    private static func context(
        _ connection: NATSConnection, waitMs: Int64, maxPendingAsync: Int64, closure: AnyObject, handler: jsPubAckHandler
    ) throws(ClusterError) -> OpaquePointer {
        var options = jsOptions()
        try NATSConnection.check(jsOptions_Init(&options), "initialising the JetStream options")
        options.Wait = waitMs
        options.PublishAsync.MaxPending = maxPendingAsync
        options.PublishAsync.AckHandler = handler
        options.PublishAsync.AckHandlerClosure = Unmanaged.passRetained(closure).toOpaque()
        var context: OpaquePointer?
        try NATSConnection.check(natsConnection_JetStream(&context, connection.handle, &options), "opening JetStream")
        guard let context else { throw ClusterError(code: .failed, message: "natsConnection_JetStream returned nothing") }
        return context
    }

    /// What a refused publish means: a failed expectation ("wrong last sequence", JetStream error 10071) is a
    /// `conflict`, no stream listening is `unavailable`, the rest as the status says.
    static func publishError(_ status: natsStatus, _ code: jsErrCode, subject: String) -> ClusterError {
        if code == JSStreamWrongLastSequenceErr {
            return ClusterError(code: .conflict, message: "\(subject): wrong last sequence")
        }
        if status == NATS_NO_RESPONDERS {
            return ClusterError(code: .unavailable, message: "publishing on \(subject): no stream answered")
        }
        return NATSConnection.error(status, "publishing on \(subject)")
    }

    deinit {
        jsCtx_Destroy(handle)
        jsCtx_Destroy(batchHandle)
    }

    // MARK: Streams

    struct StreamConfig: Sendable {
        var name: String
        var subjects: [String]
        /// Nanoseconds; 0 keeps messages for ever.
        var maxAgeNs: Int64 = 0
        var maxMessagesPerSubject: Int64 = 0
        var replicas: Int = 1
        var memory = false
    }

    /// Creates the stream, or leaves it as it is when it exists (a running cluster's streams are not reconfigured by
    /// a node starting with other options).
    func ensureStream(_ config: StreamConfig) throws(ClusterError) {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        if js_GetStreamInfo(&info, handle, config.name, nil, &code) == NATS_OK {
            jsStreamInfo_Destroy(info)
            return
        }
        var stream = jsStreamConfig()
        try NATSConnection.check(jsStreamConfig_Init(&stream), "initialising a stream configuration")
        let status: natsStatus = config.name.withCString { name in
            withCStrings(config.subjects) { subjects, count in
                stream.Name = name
                stream.Subjects = subjects
                stream.SubjectsLen = count
                stream.MaxAge = config.maxAgeNs
                stream.MaxMsgsPerSubject = config.maxMessagesPerSubject == 0 ? -1 : config.maxMessagesPerSubject
                stream.Replicas = Int64(config.replicas)
                stream.Storage = config.memory ? js_MemoryStorage : js_FileStorage
                stream.AllowDirect = true
                var created: UnsafeMutablePointer<jsStreamInfo>?
                var addCode = jsErrCode(0)
                let status = js_AddStream(&created, handle, &stream, nil, &addCode)
                jsStreamInfo_Destroy(created)
                return status
            }
        }
        try NATSConnection.check(status, "creating the stream \(config.name)")
    }

    /// The stream's last sequence (0 when empty).
    func lastSequence(stream: String) throws(ClusterError) -> UInt64 {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        try NATSConnection.check(js_GetStreamInfo(&info, handle, stream, nil, &code), "reading the stream \(stream)")
        defer { jsStreamInfo_Destroy(info) }
        return info?.pointee.State.LastSeq ?? 0
    }

    // MARK: Publishing

    /// What a publish requires of the subject's last message.
    enum Expectation: Sendable, Equatable {
        case none
        /// The subject has no message (a create).
        case noMessage
        /// The subject's last message has this stream sequence.
        case lastSequence(UInt64)
    }

    /// Publishes and waits for the stream's acknowledgement; returns the message's stream sequence.
    ///
    /// A clustered stream acknowledges once its Raft group committed the message (a majority of replicas hold it).
    /// A failed expectation ("wrong last sequence", JetStream error 10071) throws `conflict`.
    func publish(_ subject: String, _ data: [UInt8], expecting expectation: Expectation = .none) throws(ClusterError)
        -> UInt64
    {
        try requireConnection(subject)
        var options = jsPubOptions()
        try NATSConnection.check(jsPubOptions_Init(&options), "initialising publish options")
        switch expectation {
        case .none: break
        case .noMessage: options.ExpectNoMessage = true
        case .lastSequence(let sequence): options.ExpectLastSubjectSeq = sequence
        }
        options.MaxWait = waitMs
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(0)
        let status = data.withUnsafeBytes { bytes in
            js_Publish(&ack, handle, subject, bytes.baseAddress, Int32(bytes.count), &options, &code)
        }
        defer { jsPubAck_Destroy(ack) }
        guard status == NATS_OK else { throw Self.publishError(status, code, subject: subject) }
        return ack?.pointee.Sequence ?? 0
    }

    /// Refuses a write while the connection is down. nats.c would keep it in its reconnect buffer and send it on
    /// reconnecting, after the caller was told it failed (its wait timed out): a save answered UNAVAILABLE would be
    /// stored later, perhaps over a newer one. Refused at once, it is never stored.
    private func requireConnection(_ subject: String) throws(ClusterError) {
        guard connection.state == .connected else {
            throw ClusterError(code: .unavailable, message: "publishing on \(subject): not connected to NATS")
        }
    }

    /// Publishes every message at once, each with its own expectation, and waits for all their acknowledgements:
    /// one round trip for the batch instead of one per message. Subjects must be distinct (a second write of a
    /// subject would rest on the first's sequence: publish it in a later batch). Returns each message's stream
    /// sequence or error, in order; a message not acknowledged within the wait is `timeout` (it may still be
    /// stored, as with `publish`).
    func publishAll(_ messages: [(subject: String, data: [UInt8], expectation: Expectation)])
        -> [Result<UInt64, ClusterError>]
    {
        if let subject = messages.first?.subject {
            do throws(ClusterError) {
                try requireConnection(subject)
            } catch {
                return messages.map { _ in .failure(error) }
            }
        }
        return batchLock.withLock { _ in
            // A signal left by an earlier batch's late message was not counted (`waiting` no longer had it), but
            // one counted after that batch stopped waiting was: take those back first.
            while batchAcks.arrived.wait(timeout: .now()) == .success {}
            batchAcks.state.withLock { $0 = BatchAcks.State() }
            var immediate: [Int: Result<UInt64, ClusterError>] = [:]
            var sent = 0
            for (index, message) in messages.enumerated() {
                var options = jsPubOptions()
                _ = jsPubOptions_Init(&options)
                switch message.expectation {
                case .none: break
                case .noMessage: options.ExpectNoMessage = true
                case .lastSequence(let sequence): options.ExpectLastSubjectSeq = sequence
                }
                options.MaxWait = waitMs
                var natsMessage: OpaquePointer?
                let created = message.data.withUnsafeBytes { bytes in
                    natsMsg_Create(&natsMessage, message.subject, nil, bytes.baseAddress, Int32(bytes.count))
                }
                guard created == NATS_OK, let natsMessage else {
                    immediate[index] = .failure(NATSConnection.error(created, "publishing on \(message.subject)"))
                    continue
                }
                let address = Int(bitPattern: natsMessage)
                // Known before it is sent: its acknowledgement may come back before js_PublishMsgAsync returns.
                batchAcks.state.withLock { $0.waiting[address] = index }
                var owned: OpaquePointer? = natsMessage
                // On success the library takes the message ("msg will be set to NULL"); otherwise it is ours.
                let status = js_PublishMsgAsync(batchHandle, &owned, &options)
                if status == NATS_OK {
                    sent += 1
                } else {
                    batchAcks.state.withLock { _ = $0.waiting.removeValue(forKey: address) }
                    natsMsg_Destroy(owned)
                    immediate[index] = .failure(NATSConnection.error(status, "publishing on \(message.subject)"))
                }
            }
            // The library times each message out after `waitMs` (its handler then reports the timeout); a second
            // wait's worth covers its timer.
            let deadline = DispatchTime.now() + .milliseconds(Int(2 * waitMs))
            for _ in 0..<sent where batchAcks.arrived.wait(timeout: deadline) == .timedOut {
                break
            }
            let outcomes = batchAcks.state.withLock { state in
                state.waiting.removeAll()
                return state.outcomes
            }
            return messages.indices.map { index in
                immediate[index] ?? outcomes[index]
                    ?? .failure(ClusterError(code: .timeout, message: "publishing on \(messages[index].subject): no acknowledgement in time"))
            }
        }
    }

    /// Publishes without waiting; the acknowledgement is counted in `counters` when it comes. Blocks only while
    /// `maxPendingAsync` publishes are unacknowledged (the library's stall wait), which bounds memory. With
    /// `headers`, the message carries them (name, value).
    func publishAsync(_ subject: String, _ data: [UInt8], headers: [(String, String)] = []) throws(ClusterError) {
        guard !headers.isEmpty else {
            let status = data.withUnsafeBytes { bytes in
                js_PublishAsync(handle, subject, bytes.baseAddress, Int32(bytes.count), nil)
            }
            try NATSConnection.check(status, "publishing on \(subject)")
            return
        }
        var message: OpaquePointer?
        let created = data.withUnsafeBytes { bytes in
            natsMsg_Create(&message, subject, nil, bytes.baseAddress, Int32(bytes.count))
        }
        try NATSConnection.check(created, "publishing on \(subject)")
        // "the user should always call natsMsg_Destroy, regardless of success or failure" (js_PublishMsgAsync):
        // on success the library has cleared the pointer and the call does nothing.
        defer { natsMsg_Destroy(message) }
        for (name, value) in headers {
            try NATSConnection.check(natsMsgHeader_Set(message, name, value), "setting the header \(name)")
        }
        try NATSConnection.check(js_PublishMsgAsync(handle, &message, nil), "publishing on \(subject)")
    }

    /// Waits until every asynchronous publish so far is acknowledged (or failed).
    func waitForAsyncPublishes(timeoutMs: Int64) throws(ClusterError) {
        var options = jsPubOptions()
        _ = jsPubOptions_Init(&options)
        options.MaxWait = timeoutMs
        try NATSConnection.check(js_PublishAsyncComplete(handle, &options), "waiting for publish acknowledgements")
    }

    // MARK: Ordered consumers

    /// An ordered consumer of `stream` limited to `subject`, from `startSequence` (1 or 0: the first message), read
    /// with `next(timeoutMs:jetStream: true)` on the caller's thread.
    ///
    /// An ordered consumer is ephemeral, without acknowledgements, with flow control and heartbeats; the library
    /// recreates it from the last sequence it delivered if a message is missed or the server is lost, so the
    /// reader sees every message once and in order. Flow control answers go out as the reader takes messages, so
    /// a slow reader slows the server instead of growing a queue.
    func orderedConsumer(stream: String, subject: String, startSequence: UInt64) throws(ClusterError)
        -> NATSSubscription
    {
        var subscriptionOptions = jsSubOptions()
        try NATSConnection.check(jsSubOptions_Init(&subscriptionOptions), "initialising subscription options")
        subscriptionOptions.Ordered = true
        if startSequence > 1 {
            subscriptionOptions.Config.DeliverPolicy = js_DeliverByStartSequence
            subscriptionOptions.Config.OptStartSeq = startSequence
        } else {
            subscriptionOptions.Config.DeliverPolicy = js_DeliverAll
        }
        var subscription: OpaquePointer?
        var code = jsErrCode(0)
        let status = stream.withCString { name in
            subscriptionOptions.Stream = name
            return js_SubscribeSync(&subscription, handle, subject, nil, &subscriptionOptions, &code)
        }
        try NATSConnection.check(status, "consuming \(subject) from \(stream)")
        guard let subscription else { throw ClusterError(code: .failed, message: "no consumer for \(subject)") }
        _ = natsSubscription_SetPendingLimits(subscription, 1_000_000, 256 * 1024 * 1024)
        return NATSSubscription(handle: subscription)
    }

    // MARK: Key-value buckets

    struct BucketConfig: Sendable {
        var name: String
        var history: UInt8 = 1
        /// Nanoseconds after which a value not written again disappears; 0 keeps values for ever.
        var ttlNs: Int64 = 0
        var replicas: Int = 1
        var maxValueBytes: Int32 = 1 << 20
    }

    /// Binds to the bucket, creating it when it does not exist.
    func keyValue(_ config: BucketConfig) throws(ClusterError) -> KeyValueBucket {
        var store: OpaquePointer?
        let found = js_KeyValue(&store, handle, config.name)
        if found == NATS_OK, let store {
            return KeyValueBucket(jetStream: self, handle: store, name: config.name)
        }
        var settings = kvConfig()
        try NATSConnection.check(kvConfig_Init(&settings), "initialising a bucket configuration")
        let status = config.name.withCString { name in
            settings.Bucket = name
            settings.History = config.history
            settings.TTL = config.ttlNs
            settings.Replicas = Int32(config.replicas)
            settings.StorageType = js_FileStorage
            settings.MaxValueSize = config.maxValueBytes
            return js_CreateKeyValue(&store, handle, &settings)
        }
        if status != NATS_OK {
            // Another node may have created it meanwhile.
            if js_KeyValue(&store, handle, config.name) == NATS_OK, let store {
                return KeyValueBucket(jetStream: self, handle: store, name: config.name)
            }
            throw NATSConnection.error(status, "creating the bucket \(config.name)")
        }
        guard let store else { throw ClusterError(code: .failed, message: "no bucket \(config.name)") }
        return KeyValueBucket(jetStream: self, handle: store, name: config.name)
    }
}

/// One value of a bucket: its bytes and revision (the stream sequence of the message that set it).
struct KVEntry: Sendable, Equatable {
    var key: String
    var value: [UInt8]
    var revision: UInt64
}

/// A JetStream key-value bucket. Conditional writes go through `JetStream.publish` on the key's subject, so that
/// "wrong last sequence" is told apart from other failures by its JetStream error code.
final class KeyValueBucket: @unchecked Sendable {
    // @unchecked Sendable: nats.c's kvStore is reference-counted and locks internally; `handle` is immutable.
    let jetStream: JetStream
    let handle: OpaquePointer
    let name: String

    init(jetStream: JetStream, handle: OpaquePointer, name: String) {
        self.jetStream = jetStream
        self.handle = handle
        self.name = name
    }

    deinit {
        kvStore_Destroy(handle)
    }

    /// The name of the stream behind the bucket.
    var streamName: String { "KV_\(name)" }

    /// The subject a key's values are published on.
    func subject(_ key: String) -> String { "$KV.\(name).\(key)" }

    /// The key's current value, or nil when it has none (never set, deleted, or expired).
    func get(_ key: String) throws(ClusterError) -> KVEntry? {
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, handle, key)
        if status == NATS_NOT_FOUND { return nil }
        try NATSConnection.check(status, "reading \(key) from \(name)")
        guard let entry else { return nil }
        defer { kvEntry_Destroy(entry) }
        return Self.entry(entry)
    }

    /// Sets the key unconditionally; returns its revision.
    @discardableResult
    func put(_ key: String, _ value: [UInt8]) throws(ClusterError) -> UInt64 {
        try jetStream.publish(subject(key), value)
    }

    /// Sets the key only if it has no value; `conflict` otherwise.
    @discardableResult
    func create(_ key: String, _ value: [UInt8]) throws(ClusterError) -> UInt64 {
        try jetStream.publish(subject(key), value, expecting: .noMessage)
    }

    /// Sets the key only if its revision is still `revision` (0: it has no value); `conflict` otherwise.
    @discardableResult
    func update(_ key: String, _ value: [UInt8], revision: UInt64) throws(ClusterError) -> UInt64 {
        try jetStream.publish(subject(key), value, expecting: revision == 0 ? .noMessage : .lastSequence(revision))
    }

    /// `update` for several distinct keys at once (one round trip for them all); each result as `update`'s.
    func updateAll(_ writes: [(key: String, value: [UInt8], revision: UInt64)]) -> [Result<UInt64, ClusterError>] {
        jetStream.publishAll(writes.map { write in
            (subject(write.key), write.value, write.revision == 0 ? .noMessage : .lastSequence(write.revision))
        })
    }

    /// Every current value of the keys matching `filter` (`>` for all, `arm.07.>` for a prefix): a watch that
    /// delivers each key's value and then a marker saying the current values are done, read until that marker.
    func entries(matching filter: String = ">") throws(ClusterError) -> [KVEntry] {
        var watcher: OpaquePointer?
        var options = kvWatchOptions()
        _ = kvWatchOptions_Init(&options)
        options.IgnoreDeletes = true
        options.Timeout = jetStream.waitMs
        try NATSConnection.check(kvStore_Watch(&watcher, handle, filter, &options), "listing \(filter) in \(name)")
        guard let watcher else { return [] }
        defer { kvWatcher_Destroy(watcher) }
        var result: [KVEntry] = []
        while true {
            var entry: OpaquePointer?
            try NATSConnection.check(kvWatcher_Next(&entry, watcher, jetStream.waitMs), "listing \(filter) in \(name)")
            // "a NULL entry … to indicate that the initial values have been delivered" (kvWatcher_Next).
            guard let entry else { break }
            defer { kvEntry_Destroy(entry) }
            if kvEntry_Operation(entry) == kvOp_Put {
                result.append(Self.entry(entry))
            }
        }
        return result
    }

    private static func entry(_ entry: OpaquePointer) -> KVEntry {
        let key = String(cString: kvEntry_Key(entry))
        let length = Int(kvEntry_ValueLen(entry))
        var value: [UInt8] = []
        if length > 0, let bytes = kvEntry_Value(entry) {
            value = [UInt8](UnsafeRawBufferPointer(start: bytes, count: length))
        }
        return KVEntry(key: key, value: value, revision: kvEntry_Revision(entry))
    }
}
