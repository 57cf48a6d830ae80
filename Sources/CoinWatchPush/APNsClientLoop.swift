import CoinWatchCore
import CoinWatchLogging

/// The provider's thread: takes queued notifications, starts up to `capacity` transfers on the multi handle,
/// and turns finished transfers into responses.
///
/// Every stored property is touched only on that thread (after `run` starts; `init` runs before it).
final class APNsClientLoop: @unchecked Sendable {
    private let configuration: APNsConfiguration
    private let multi: CurlMulti
    private let inbox: APNsInbox
    private let counters: APNsCounters
    private let logger: Logger
    private let token: ProviderToken
    private let settings: CurlTransfer.Settings
    private let deviceURLPrefix: String

    private var queue = FIFOQueue<APNsRequest>()
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var idle: [CurlTransfer] = []
    private var responses: [APNsResponse] = []
    /// Set while sending is paused after a refused fresh token: until when, and why.
    private var pause: (until: Int64, reason: String)?
    /// A token made after a refusal is tried with one notification before the rest follow.
    private var confirmedGeneration = 0
    /// Transport failures since the last answer, for logging the first and the recovery only.
    private var failing = false
    /// An answer came since the provider started or last lost a connection. Until then one notification goes
    /// alone: a client assumes 100 streams until the server's SETTINGS arrive, so a burst on a fresh connection
    /// could exceed a lower limit, and a host that cannot be reached gets one attempt at a time, not one per
    /// waiting notification.
    private var answered = false

    init(configuration: APNsConfiguration, multi: CurlMulti, signer: any ProviderTokenSigner, inbox: APNsInbox,
         counters: APNsCounters, logger: Logger) throws(PushError) {
        self.configuration = configuration
        self.multi = multi
        self.inbox = inbox
        self.counters = counters
        self.logger = logger
        token = ProviderToken(
            keyID: configuration.keyID, teamID: configuration.teamID, refresh: configuration.tokenRefresh,
            signer: signer, wallClock: { WallClock.milliseconds() / 1000 })
        settings = CurlTransfer.Settings(
            plainHTTP: configuration.endpoint.lowercased().hasPrefix("http://"), caFile: configuration.caFile,
            connectTimeoutMilliseconds: Int(configuration.connectTimeout.inMilliseconds))
        deviceURLPrefix = configuration.endpoint + "/3/device/"
        // One handle up front proves the options are accepted before the server reports itself started.
        idle.append(try CurlTransfer(settings: settings))
    }

    func run(onResponses: @Sendable ([APNsResponse]) -> Void) {
        while true {
            let (requests, stopping) = inbox.take()
            if stopping { break }
            queue.append(contentsOf: requests)
            let now = MonotonicClock.nanoseconds()
            if let pause, now >= pause.until {
                self.pause = nil
                token.retryAfterPause()
                logger.notice("retrying APNs delivery with a fresh provider token")
            }
            startTransfers(now: now)
            multi.perform()
            while let (easy, result) = multi.nextFinished() {
                finish(easy, result)
            }
            publishCounters()
            if !responses.isEmpty {
                onResponses(responses)
                responses.removeAll(keepingCapacity: true)
            }
            multi.poll(timeoutMilliseconds: pollTimeout(now: MonotonicClock.nanoseconds()))
        }
        // Stopped: the transfers in flight are abandoned (their callers still hold them) and the connections
        // closed now, not when the last reference to the client goes.
        for transfer in active.values {
            multi.remove(transfer)
        }
        multi.close()
        active.removeAll()
        idle.removeAll()
        publishCounters()
    }

    /// How many transfers may run now: the capacity, or one until a connection has answered or while a token
    /// made after a refusal is unproven.
    private var allowedTransfers: Int {
        guard pause == nil else { return 0 }
        if !answered { return 1 }
        if let current = token.current, current.replacesRejected, current.generation != confirmedGeneration { return 1 }
        return configuration.capacity
    }

    private func startTransfers(now: Int64) {
        while active.count < allowedTransfers, let request = queue.popFirst() {
            let nowMilliseconds = WallClock.milliseconds()
            let expiresAt = request.expiration * 1000
            if request.expiration != 0 && nowMilliseconds >= expiresAt {
                responses.append(APNsResponse(request: request, status: 0, reason: "", failure: "", outcome: .expired))
                continue
            }
            if request.payload.count > APNsRequest.maxPayloadBytes {
                // APNs would answer 413 PayloadTooLarge; sending it cannot succeed, so it is refused here unsent.
                responses.append(APNsResponse(
                    request: request, status: 0, reason: "PayloadTooLarge",
                    failure: "the payload is \(request.payload.count) bytes; APNs takes at most \(APNsRequest.maxPayloadBytes)",
                    outcome: .rejected))
                continue
            }
            let current: ProviderToken.Token
            do {
                current = try token.token(now: now)
            } catch {
                queue.prepend(request)
                enterPause(reason: "cannot sign a provider token: \(error)", now: now)
                return
            }
            let transfer: CurlTransfer
            do throws(PushError) {
                if let reused = idle.popLast() {
                    transfer = reused
                } else {
                    transfer = try CurlTransfer(settings: settings)
                }
            } catch {
                queue.prepend(request)
                logger.error("cannot start an APNs transfer", ["reason": error.message])
                return
            }
            // Given up at the expiry at the latest, so a transfer libcurl still holds is never sent after it.
            var timeout = Int(configuration.requestTimeout.inMilliseconds)
            if request.expiration != 0 { timeout = max(1, min(timeout, Int(expiresAt - nowMilliseconds))) }
            guard transfer.prepare(
                request, url: deviceURLPrefix + request.deviceToken, authorization: current.header,
                tokenGeneration: current.generation, timeoutMilliseconds: timeout),
                multi.add(transfer)
            else {
                transfer.clear()
                idle.append(transfer)
                responses.append(APNsResponse(
                    request: request, status: 0, reason: "", failure: "libcurl refused the transfer", outcome: .retry))
                continue
            }
            active[transfer.easy] = transfer
        }
    }

    private func finish(_ easy: UnsafeMutableRawPointer, _ result: CurlResult) {
        guard let transfer = active.removeValue(forKey: easy), let request = transfer.request else { return }
        multi.remove(transfer)
        defer {
            transfer.clear()
            idle.append(transfer)
        }
        // A 200 that arrived is an answer, whatever libcurl says of the connection behind it: libcurl 7.88 can
        // fail a transfer whose 200 it has read when a GOAWAY or a close follows (curl issue #11859), and sending
        // such a notification again would deliver it twice. Any other status carries its reason in a body that may
        // not have arrived, so it still counts as no answer.
        guard result.succeeded || transfer.status == 200 else {
            answered = false
            let failure = transfer.failure(result)
            if !failing {
                failing = true
                logger.warning("APNs did not answer; retrying with backoff", [
                    "endpoint": configuration.endpoint, "reason": failure,
                ])
            }
            responses.append(APNsResponse(request: request, status: 0, reason: "", failure: failure, outcome: .retry))
            return
        }
        answered = true
        if failing {
            failing = false
            logger.notice("APNs answers again", ["endpoint": configuration.endpoint])
        }
        let status = transfer.status
        let reason = APNsResponse.reason(fromBody: transfer.body)
        if status == 403 {
            providerTokenRefused(request, generation: transfer.tokenGeneration, reason: reason)
            return
        }
        confirmedGeneration = max(confirmedGeneration, transfer.tokenGeneration)
        responses.append(APNsResponse(
            request: request, status: status, reason: reason, failure: "", outcome: APNsOutcome.of(status: status, reason: reason)))
    }

    /// 403: APNs refused the provider token (ExpiredProviderToken, InvalidProviderToken, ...). The notification
    /// goes back to the front of the queue: once more with a fresh token, and if that one is refused too, after
    /// the pause.
    private func providerTokenRefused(_ request: APNsRequest, generation: Int, reason: String) {
        queue.prepend(request)
        let now = MonotonicClock.nanoseconds()
        switch token.rejected(generation: generation) {
        case .retry:
            logger.debug("APNs refused the provider token; making a fresh one", ["reason": reason])
        case .pause:
            enterPause(reason: "APNs refused a freshly made provider token (\(reason.isEmpty ? "403" : reason))", now: now)
        }
    }

    private func enterPause(reason: String, now: Int64) {
        guard pause == nil else { return }
        pause = (now + configuration.pauseAfterRejectedToken.inNanoseconds, reason)
        logger.error("APNs delivery paused: \(reason); check --apns-key-file, --apns-key-id and --apns-team-id", [
            "key_id": configuration.keyID, "team_id": configuration.teamID,
            "retry_in": "\(configuration.pauseAfterRejectedToken.inMilliseconds / 1000)s",
        ])
    }

    private func publishCounters() {
        counters.update(
            queued: queue.count, inFlight: active.count, pauseReason: pause?.reason, tokensIssued: token.issued)
    }

    /// Sleep until libcurl's next timer (`curl_multi_poll` takes the earlier of the two), at most a second, or
    /// not at all while there is work that can start.
    private func pollTimeout(now: Int64) -> Int32 {
        if !queue.isEmpty && active.count < allowedTransfers { return 0 }
        if let pause {
            return Int32(clamping: max(0, min(1000, (pause.until - now) / 1_000_000)))
        }
        return 1000
    }
}
