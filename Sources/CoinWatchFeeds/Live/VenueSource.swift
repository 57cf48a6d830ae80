import CoinWatchCore
import CoinWatchLogging
import CoinWatchModel
import CoinWatchService

/// One live venue: a WebSocket connection that subscribes, reads trades into a price sink, judges its own
/// liveness and reconnects with backoff. Everything runs on one thread (the feeds' event loop in production, a
/// manual scheduler in tests); nothing here blocks it.
///
/// Liveness: any input (a message, a venue heartbeat, a ping, a pong) proves the connection alive. After
/// `pingAfter` of silence a WebSocket ping goes out, so a quiet channel answers with a pong instead of being
/// mistaken for a dead one; after `deadline` of silence the connection is given up and replaced. The upgrade
/// (with the TCP connect and any TLS handshake) must finish within `handshakeTimeout`.
///
/// Failures: every way a connection ends (refused, reset, a venue close, a protocol violation, a message over the
/// limit, a binary frame, the deadline) leads to one reconnect after a `Backoff` wait, with the venue's
/// subscriptions sent again. Rejected messages (malformed, unknown, an unmapped instrument, a duplicate or an
/// out-of-order number) are counted and skipped; they do not end the connection. Log lines of each kind are rate
/// limited.
final class VenueSource: FeedTransportDelegate {
    struct Configuration {
        /// The endpoint as configured (before the adapter adds what it needs, such as Finnhub's token).
        var url: WebSocketURL
        /// What to subscribe to: the venue's instrument for each symbol.
        var instruments: [(instrument: String, symbol: Symbol)]
        var liveness: VenueLiveness
        var backoff = Backoff.Configuration()
        var maxMessageBytes = 1 << 20
        var handshakeTimeout: Duration = .seconds(15)
        /// How long a stopping source waits for its close handshake.
        var stopTimeout: Duration = .seconds(2)
        var userAgent = "coinwatchd"
    }

    enum Phase: Equatable {
        case idle, connecting, handshaking, open, waiting, stopped
    }

    let adapter: any VenueAdapter
    let configuration: Configuration
    let symbolMap: SymbolMap
    let sink: any PriceSink
    let stats: SourceStatsRecorder
    let scheduler: any FeedScheduler
    let dialer: any FeedDialer
    let sha1: ([UInt8]) -> [UInt8]
    let keyBytes: () -> [UInt8]
    let logger: Logger

    private(set) var phase = Phase.idle
    private var transport: (any FeedTransport)?
    private var client: WebSocketClient?
    private var backoff: Backoff
    private var sequences = SequenceTracker()
    private var log = RateLimitedLog()
    /// The instruments subscribed to, and what messages are read with (kept from one to the next, so reading a
    /// trade allocates nothing).
    private var context: VenueReadContext
    /// The symbol of each subscribed instrument, by its position in `context.instruments`.
    private let symbols: [Symbol]
    /// The subscribed instrument of the last trade taken, and its symbol: a venue's trades mostly repeat one, and
    /// comparing with the same `String` is cheaper than looking it up.
    private var lastInstrument: (name: String, symbol: Symbol)?
    private var connections = 0
    private var lastActivityNanos: Int64 = 0
    private var pingOutstanding = false
    private var livenessTimer: FeedTimer?
    private var handshakeTimer: FeedTimer?
    private var reconnectTimer: FeedTimer?
    private var stopTimer: FeedTimer?
    private var onStopped: (() -> Void)?
    /// Why the current connection is ending, when this side decided it (set before closing the transport).
    private var ending: (failure: Backoff.Failure, reason: String)?
    /// Prices of the reads of this readiness, published together at its end.
    private var pending: [PriceTick] = []
    /// Prices after which a batch is published before its readiness ends (about 0.3 ms of reading here).
    static let publishBatchLimit = 1_024
    private var pendingMessages = 0
    /// Whether the current connection has delivered data (resets the backoff).
    private var delivered = false

    init(
        adapter: any VenueAdapter, configuration: Configuration, symbolMap: SymbolMap, sink: any PriceSink,
        stats: SourceStatsRecorder, scheduler: any FeedScheduler, dialer: any FeedDialer,
        sha1: @escaping ([UInt8]) -> [UInt8], keyBytes: @escaping () -> [UInt8] = FeedCrypto.webSocketKey,
        logger: Logger,
        random: @escaping @Sendable (Int64) -> Int64 = { Int64.random(in: 0...$0) }
    ) {
        self.adapter = adapter
        self.configuration = configuration
        self.symbolMap = symbolMap
        self.sink = sink
        self.stats = stats
        self.scheduler = scheduler
        self.dialer = dialer
        self.sha1 = sha1
        self.keyBytes = keyBytes
        self.logger = logger
        backoff = Backoff(configuration: configuration.backoff, random: random)
        let instruments = VenueInstruments(configuration.instruments.map(\.instrument))
        var symbols = [Symbol?](repeating: nil, count: instruments.count)
        for (instrument, symbol) in configuration.instruments {
            symbols[instruments.position(of: instrument)!] = symbol
        }
        context = VenueReadContext(instruments: instruments)
        self.symbols = symbols.map { $0! }
    }

    private var now: Int64 { scheduler.clock.monotonicNanos() }

    // MARK: Lifecycle

    func start() {
        guard phase == .idle else { return }
        connect()
    }

    /// Closes the connection (a close frame with 1001 where one is open, bounded by `stopTimeout`) and calls `done`
    /// once the transport is closed. No reconnect follows.
    func stop(_ done: @escaping () -> Void) {
        guard phase != .stopped else {
            done()
            return
        }
        phase = .stopped
        cancelTimers()
        stats.update { $0.isConnected = false }
        guard let transport else {
            done()
            return
        }
        onStopped = done
        if client?.state == .open {
            client?.close(code: WebSocketCloseCode.goingAway, reason: "shutting down")
            flush()
            stopTimer = scheduler.schedule(afterNanoseconds: configuration.stopTimeout.inNanoseconds) { [weak self] in
                self?.transport?.close(afterFlush: false)
            }
            transport.close(afterFlush: true)
        } else {
            transport.close(afterFlush: false)
        }
    }

    // MARK: Connecting

    private func connect() {
        phase = .connecting
        ending = nil
        delivered = false
        pingOutstanding = false
        let url = adapter.connectURL(configuration.url)
        handshakeTimer = scheduler.schedule(afterNanoseconds: configuration.handshakeTimeout.inNanoseconds) {
            [weak self] in
            guard let self else { return }
            handshakeTimer = nil
            guard phase == .connecting || phase == .handshaking else { return }
            end(.connection, "no WebSocket upgrade within \(describe(configuration.handshakeTimeout))", abort: true)
            if phase == .connecting { connectionEnded(nil) }
        }
        dialer.dial(url, delegate: self) { [weak self] result in
            guard let self, phase == .connecting else {
                // Stopped or timed out meanwhile: drop the late connection.
                if case .success(let transport) = result { transport.close(afterFlush: false) }
                return
            }
            switch result {
            case .success(let transport):
                logger.debug("\(adapter.name): connected to \(url.hostHeader), upgrading")
                self.transport = transport
                startHandshake(url)
            case .failure(let error):
                ending = (.connection, error.message)
                connectionEnded(nil)
            }
        }
    }

    private func startHandshake(_ url: WebSocketURL) {
        phase = .handshaking
        var client = WebSocketClient(
            url: url,
            configuration: .init(maxMessageBytes: configuration.maxMessageBytes,
                                 headers: [("User-Agent", configuration.userAgent)]),
            keyBytes: keyBytes(), sha1: sha1)
        client.start()
        self.client = client
        lastActivityNanos = now
        flush()
    }

    private func opened() {
        phase = .open
        if let handshakeTimer {
            scheduler.cancel(handshakeTimer)
            self.handshakeTimer = nil
        }
        connections += 1
        if connections > 1 {
            sequences.reconnected()
        }
        let instruments = configuration.instruments.map(\.instrument)
        for message in adapter.subscribeMessages(instruments) {
            client?.send(text: message)
        }
        stats.update {
            $0.isConnected = true
            if self.connections > 1 { $0.reconnects &+= 1 }
        }
        if connections == 1 || log.admit("connected", now: now) != nil {
            logger.info("\(adapter.name): connected, subscribed", [
                "url": configuration.url.redacted, "instruments": instruments.joined(separator: ","),
                "reconnects": "\(connections - 1)",
            ])
        }
        armLiveness()
    }

    // MARK: Input

    /// What one read amounted to, owned, so it is handled after the WebSocket state machine is done with the bytes.
    /// Plain values only (a close's reason is kept beside the list), so that emptying the list after each read
    /// visits no element.
    private enum ReadEvent {
        case opened
        /// A text message: where its bytes are in `readTexts`.
        case text(Range<Int>)
        case binary(Int)
        case activity
        /// The venue's close frame, whose reason is `closeReason` (a connection closes once).
        case closed(UInt16?)
    }

    private var readEvents: [ReadEvent] = []
    /// The text messages of one read, one after another: copied out of the WebSocket client's buffer, which it
    /// reuses, into one that is kept from read to read.
    private var readTexts: [UInt8] = []

    func transport(_ transport: any FeedTransport, received bytes: UnsafeRawBufferPointer) {
        // The client and the events array are moved out while they are mutated, not copied: a copy would leave
        // `self` holding the same buffers, and every append would copy them whole (copy-on-write) — a message
        // being assembled once per read, so a 1 MiB message held twice.
        guard transport === self.transport, var client = self.client.take() else { return }
        lastActivityNanos = now
        pingOutstanding = false
        var failure: WebSocketError?
        var closeReason = ""
        var events: [ReadEvent] = []
        swap(&events, &readEvents)
        events.removeAll(keepingCapacity: true)
        var texts: [UInt8] = []
        swap(&texts, &readTexts)
        texts.removeAll(keepingCapacity: true)
        do {
            try client.receive(bytes) { event in
                switch event {
                case .opened: events.append(.opened)
                case .text(let text):
                    // A trade message with nothing before it in this read is taken where it stands: taking trades
                    // touches neither the client nor the transport. Anything else waits its turn, copied.
                    if events.isEmpty, takeUsualTrades(text) {
                        pendingMessages += 1
                        return
                    }
                    texts.append(contentsOf: text)
                    events.append(.text((texts.count - text.count)..<texts.count))
                case .binary(let payload): events.append(.binary(payload.count))
                case .ping, .pong: events.append(.activity)
                case .closed(let code, let reason):
                    closeReason = reason
                    events.append(.closed(code))
                }
            }
        } catch {
            failure = error
        }
        self.client = client
        texts.withUnsafeBytes { texts in
            for event in events {
                handle(event, texts, closeReason: closeReason)
                // A binary frame ended the connection: what followed it in the same read is not taken.
                if ending != nil && self.client?.shouldCloseTransport == true { break }
            }
        }
        events.removeAll(keepingCapacity: events.capacity <= 256)
        readEvents = events
        texts.removeAll(keepingCapacity: texts.capacity <= 1 << 17)
        readTexts = texts
        // The prices go to the sink once the transport has handed over all its socket had
        // (`transportReadFinished`), or when the connection ends before that: over TLS this call comes once per
        // 16 KiB record, and each publish wakes the alert thread. Under a flood a readiness holds up to 256 KiB;
        // a batch that reaches `publishBatchLimit` goes at once, so no price waits for more than that many others.
        if pending.count >= Self.publishBatchLimit {
            finishRead()
        }
        if let failure {
            webSocketFailed(failure)
        }
        flush()
        if self.client?.shouldCloseTransport == true, self.transport != nil {
            if ending == nil { ending = (.connection, "the venue closed the connection") }
            self.transport?.close(afterFlush: true)
        }
    }

    private func handle(_ event: ReadEvent, _ texts: UnsafeRawBufferPointer, closeReason reason: String) {
        switch event {
        case .opened:
            opened()
        case .text(let range):
            pendingMessages += 1
            read(UnsafeRawBufferPointer(rebasing: texts[range]))
        case .binary(let count):
            pendingMessages += 1
            stats.update { $0.unknown &+= 1 }
            note("binary", "\(adapter.name): a binary message (\(count) bytes) from a JSON venue; reconnecting")
            client?.fail(code: WebSocketCloseCode.unsupportedData, reason: "binary messages are not expected")
            if ending == nil { ending = (.connection, "a binary message") }
        case .activity:
            stats.touched()
        case .closed(let code):
            let text = "the venue closed the connection (\(code.map(String.init) ?? "no code")"
                + "\(reason.isEmpty ? "" : ": \(reason.prefix(80))"))"
            // 1008 (policy) and 1013 (try again later) are the venue saying no; anything else is a plain close.
            let failure: Backoff.Failure = code == 1008 || code == 1013 ? .venueError : .connection
            if ending == nil { ending = (failure, text) }
        }
    }

    private func read(_ text: UnsafeRawBufferPointer) {
        if takeUsualTrades(text) { return }
        let message: VenueMessage
        do {
            message = try adapter.read(text, &context)
        } catch {
            stats.update { $0.malformed &+= 1 }
            note("malformed", "\(adapter.name): a message that cannot be read: \(error.message)")
            return
        }
        switch message {
        case .trades(let trades, let skipped):
            if !skipped.isEmpty {
                stats.update { $0.malformed &+= UInt64(skipped.count) }
                note("malformed", "\(adapter.name): trades skipped: \(skipped[0])")
            }
            for trade in trades {
                take(trade)
            }
            delivered = true
        case .heartbeat(let marks):
            for mark in marks {
                let missed = sequences.mark(mark.instrument, lastNumber: mark.lastNumber)
                if missed > 0 { gap(mark.instrument, missed: missed) }
            }
            delivered = true
        case .subscribed:
            break
        case .ignored:
            break
        case .venueError(let text, let rateLimited):
            stats.update {
                $0.venueErrors &+= 1
                if rateLimited { $0.rateLimits &+= 1 }
            }
            let reason = "the venue reported \(rateLimited ? "a rate limit" : "an error"): \(text.prefix(200))"
            end(rateLimited ? .rateLimited(retryAfterSeconds: nil) : .venueError, reason, abort: false)
        case .unknown(let what):
            stats.update { $0.unknown &+= 1 }
            note("unknown:\(what)", "\(adapter.name): an unknown message: \(what)")
        }
    }

    /// Takes `text`'s trades when it is the venue's usual trade message (`VenueAdapter.readUsualTrades`), and says
    /// whether it was. The trades are taken from the context's list where they stand: a `VenueMessage` would retain
    /// the list and release it again, per message of a flood.
    private func takeUsualTrades(_ text: UnsafeRawBufferPointer) -> Bool {
        guard adapter.readUsualTrades(text, &context) else { return false }
        for index in context.trades.indices {
            take(context.trades[index])
        }
        delivered = true
        return true
    }

    private func take(_ trade: VenueTrade) {
        let symbol: Symbol
        if let last = lastInstrument, last.name == trade.instrument {
            symbol = last.symbol
        } else if let position = context.instruments.position(of: trade.instrument) {
            symbol = symbols[position]
            lastInstrument = (trade.instrument, symbol)
        } else {
            do {
                symbol = try symbolMap.usdSymbol(trade.instrument)
            } catch {
                stats.update { $0.unmapped &+= 1 }
                note("unmapped:\(trade.instrument)", "\(adapter.name): prices for \(trade.instrument) are not used: \(error.rule)")
                return
            }
        }
        if let number = trade.number {
            switch sequences.check(trade.instrument, number, consecutive: trade.numberIsConsecutive) {
            case .taken:
                break
            case .gap(let missed):
                gap(trade.instrument, missed: missed)
            case .duplicate:
                stats.update { $0.duplicates &+= 1 }
                note("duplicate", "\(adapter.name): dropped a duplicate of \(trade.instrument) #\(number)")
                return
            case .outOfOrder:
                stats.update { $0.outOfOrder &+= 1 }
                note("order", "\(adapter.name): dropped \(trade.instrument) #\(number), older than one already taken")
                return
            }
        }
        pending.append(PriceTick(symbol: symbol, price: trade.price, timeMs: trade.timeMs ?? scheduler.clock.wallMs()))
    }

    private func gap(_ instrument: String, missed: UInt64) {
        stats.update {
            $0.gaps &+= 1
            $0.missedMessages &+= missed
        }
        note("gap:\(instrument)", "\(adapter.name): gap in \(instrument): \(missed) numbered messages missing")
    }

    /// Publishes what the read produced, in one batch, and counts it.
    private func finishRead() {
        let prices = pending.count
        if !pending.isEmpty {
            sink.publish(pending)
            pending.removeAll(keepingCapacity: pending.count <= 1024)
        }
        if pendingMessages > 0 || prices > 0 {
            stats.received(messages: pendingMessages, prices: prices)
            pendingMessages = 0
        }
        if delivered && backoff.failures > 0 {
            backoff.reset()
            log.reset("reconnect")
        }
    }

    private func webSocketFailed(_ error: WebSocketError) {
        switch error.code {
        case .rateLimited:
            stats.update {
                $0.rateLimits &+= 1
                $0.venueErrors &+= 1
            }
            if ending == nil { ending = (.rateLimited(retryAfterSeconds: error.retryAfterSeconds), error.message) }
        case .handshakeFailed, .badAccept:
            stats.update { $0.venueErrors &+= 1 }
            if ending == nil { ending = (.venueError, "upgrade refused: \(error.message)") }
        case .messageTooBig, .protocolError, .invalidText, .unsupportedData:
            stats.update { $0.malformed &+= 1 }
            if ending == nil { ending = (.connection, "\(error.message) (closed with \(error.closeCode ?? 0))") }
        default:
            if ending == nil { ending = (.connection, error.message) }
        }
    }

    // MARK: Liveness

    private func armLiveness() {
        if let livenessTimer { scheduler.cancel(livenessTimer) }
        let liveness = configuration.liveness
        let silent = now - lastActivityNanos
        var wait = liveness.deadline.inNanoseconds - silent
        if let pingAfter = liveness.pingAfter, !pingOutstanding {
            wait = min(wait, pingAfter.inNanoseconds - silent)
        }
        livenessTimer = scheduler.schedule(afterNanoseconds: max(wait, 1_000_000)) { [weak self] in
            self?.livenessTimer = nil
            self?.checkLiveness()
        }
    }

    private func checkLiveness() {
        guard phase == .open else { return }
        let liveness = configuration.liveness
        let silent = now - lastActivityNanos
        if silent >= liveness.deadline.inNanoseconds {
            end(.connection, "no message for \(describe(liveness.deadline))", abort: true)
            return
        }
        if let pingAfter = liveness.pingAfter, silent >= pingAfter.inNanoseconds, !pingOutstanding {
            pingOutstanding = true
            client?.sendPing(Array("coinwatch".utf8))
            flush()
        }
        armLiveness()
    }

    // MARK: Ending

    /// Gives up on the current connection: with a close frame and an orderly close, or (`abort`) at once.
    private func end(_ failure: Backoff.Failure, _ reason: String, abort: Bool) {
        if ending == nil { ending = (failure, reason) }
        guard let transport else { return }
        if !abort, client?.state == .open {
            client?.close(code: WebSocketCloseCode.normal, reason: "")
            flush()
            transport.close(afterFlush: true)
        } else {
            transport.close(afterFlush: false)
        }
    }

    func transportReadFinished(_ transport: any FeedTransport) {
        guard transport === self.transport else { return }
        finishRead()
    }

    func transport(_ transport: any FeedTransport, closedWith reason: String?) {
        guard transport === self.transport else { return }
        connectionEnded(reason)
    }

    /// The connection is gone: schedule the next one (or finish stopping).
    private func connectionEnded(_ transportReason: String?) {
        // What was read before the end is published, as if the read had been the last of its batch.
        finishRead()
        transport = nil
        client = nil
        if phase == .stopped {
            if let stopTimer { scheduler.cancel(stopTimer) }
            stopTimer = nil
            let done = onStopped
            onStopped = nil
            done?()
            return
        }
        guard phase != .waiting else { return }
        cancelTimers()
        let (failure, reason) = ending ?? (.connection, transportReason.map { "the connection ended: \($0)" }
            ?? "the connection ended")
        ending = nil
        let neverOpened = phase == .connecting || phase == .handshaking
        phase = .waiting
        stats.update {
            $0.isConnected = false
            $0.lastError = reason
            if neverOpened { $0.failedConnections &+= 1 }
        }
        let delay = backoff.delay(after: failure)
        if let suppressed = log.admit("reconnect", now: now) {
            logger.warning("\(adapter.name): \(reason); reconnecting in \(describe(nanoseconds: delay))", [
                "url": configuration.url.redacted, "failures": "\(backoff.failures)",
                "suppressed": "\(suppressed)",
            ])
        }
        reconnectTimer = scheduler.schedule(afterNanoseconds: delay) { [weak self] in
            guard let self, phase == .waiting else { return }
            reconnectTimer = nil
            connect()
        }
    }

    private func cancelTimers() {
        for timer in [livenessTimer, handshakeTimer, reconnectTimer] {
            if let timer { scheduler.cancel(timer) }
        }
        livenessTimer = nil
        handshakeTimer = nil
        reconnectTimer = nil
    }

    // MARK: Helpers

    private func flush() {
        guard client?.hasOutput == true, var client = self.client.take() else { return }
        let bytes = client.takeOutput()
        self.client = client
        transport?.send(bytes)
    }

    /// A rate-limited warning of one kind.
    private func note(_ kind: String, _ text: String) {
        guard let suppressed = log.admit(kind, now: now) else { return }
        logger.warning(text, suppressed > 0 ? ["suppressed": "\(suppressed)"] : [:])
    }

    private func describe(_ duration: Duration) -> String {
        describe(nanoseconds: duration.inNanoseconds)
    }

    private func describe(nanoseconds: Int64) -> String {
        nanoseconds >= 10_000_000_000 || nanoseconds % 1_000_000_000 == 0
            ? "\(nanoseconds / 1_000_000_000) s" : "\(nanoseconds / 1_000_000) ms"
    }
}
