public import CoinWatchLogging
import CoinWatchRPC
import Dispatch
import Synchronization

/// The APNs provider: notifications over long-lived HTTP/2 connections (libcurl's multi interface, TLS through
/// OpenSSL), authenticated by one shared provider token.
///
/// libcurl owns its sockets, so the provider runs on a thread of its own (`cw-apns`), sleeping in
/// `curl_multi_poll`; `send` queues notifications for it and wakes it with `curl_multi_wakeup`, and the answers
/// leave it in batches through `onResponses`. No event loop ever waits for APNs. docs/PUSH.md has the rules.
public final class APNsClient: APNsSending {
    public let configuration: APNsConfiguration
    private let inbox: APNsInbox
    private let loop: APNsClientLoop
    private let counters: APNsCounters
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    /// Checks the configuration and sets up libcurl; nothing connects before the first notification.
    public init(configuration: APNsConfiguration, signer: any ProviderTokenSigner, logger: Logger) throws(PushError) {
        try configuration.validate()
        self.configuration = configuration
        let multi = try CurlMulti(connections: configuration.connections, streams: configuration.maxConcurrentStreams)
        inbox = APNsInbox(multi: multi)
        counters = APNsCounters()
        loop = try APNsClientLoop(
            configuration: configuration, multi: multi, signer: signer, inbox: inbox, counters: counters,
            logger: logger)
    }

    public var capacity: Int { configuration.capacity }

    public func start(onResponses: @escaping @Sendable ([APNsResponse]) -> Void) {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let loop = self.loop
        let finished = self.finished
        // Behind the loops: calls keep their pace while a burst of notifications goes out, and the burst gets
        // whatever CPU the loops leave (all of it when they are idle).
        NamedThread.start(name: "cw-apns", priority: .background) {
            loop.run(onResponses: onResponses)
            finished.signal()
        }
    }

    public func send(_ requests: [APNsRequest]) {
        guard !requests.isEmpty else { return }
        inbox.post(requests)
    }

    public var status: APNsStatus {
        var status = counters.snapshot
        status.endpoint = configuration.endpoint
        status.queued += inbox.count
        return status
    }

    public func close() {
        guard inbox.stop() else { return }
        if started.load(ordering: .relaxed) { finished.wait() }
    }
}

/// Notifications handed to the provider's thread, and the stop request.
final class APNsInbox: Sendable {
    private struct State {
        var requests: [APNsRequest] = []
        var stopping = false
    }

    private let state = Mutex(State())
    /// Only `wakeup` is called through it from other threads, and only under the lock while not stopping: the
    /// provider's thread frees the multi handle after it saw `stopping`, so no wakeup can reach a freed handle.
    private nonisolated(unsafe) let multi: CurlMulti

    init(multi: CurlMulti) {
        self.multi = multi
    }

    func post(_ requests: [APNsRequest]) {
        state.withLock { state in
            guard !state.stopping else { return }
            let wasEmpty = state.requests.isEmpty
            state.requests.append(contentsOf: requests)
            if wasEmpty { multi.wakeup() }
        }
    }

    /// Whether this call asked for the stop (false when it had been asked already).
    func stop() -> Bool {
        state.withLock { state in
            guard !state.stopping else { return false }
            state.stopping = true
            multi.wakeup()
            return true
        }
    }

    /// Everything posted since the last call, and whether to stop.
    func take() -> (requests: [APNsRequest], stopping: Bool) {
        state.withLock { state in
            defer { state.requests = [] }
            return (state.requests, state.stopping)
        }
    }

    var count: Int { state.withLock { $0.requests.count } }
}

/// What `status` reports, written by the provider's thread.
final class APNsCounters: Sendable {
    private let state = Mutex(APNsStatus(endpoint: ""))

    func update(queued: Int, inFlight: Int, pauseReason: String?, tokensIssued: Int) {
        state.withLock { status in
            status.queued = queued
            status.inFlight = inFlight
            status.paused = pauseReason != nil
            status.pauseReason = pauseReason ?? ""
            status.tokensIssued = tokensIssued
        }
    }

    var snapshot: APNsStatus { state.withLock { $0 } }
}
