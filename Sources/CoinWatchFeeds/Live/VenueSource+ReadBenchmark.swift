import CoinWatchCore
import CoinWatchLogging
import CoinWatchModel
import CoinWatchRPC
import CoinWatchService
import Synchronization

/// The venue side of a live feed, measured in process (`coinwatch-bench feeds --parts read`): a `VenueSource` with
/// the Finnhub adapter, upgraded over an in-memory transport, reads framed trade messages in 16 KiB reads (a TLS
/// record's size) into a sink that only counts.
///
/// It measures what a venue adds per message (WebSocket framing and UTF-8 checks, the adapter's JSON reading, the
/// source's symbol mapping and batching) without the exchange process, TLS, the network or the aggregator and hub,
/// which the end-to-end `ingest` part includes.
package enum VenueReadBenchmark {
    /// What a run read.
    package struct Outcome: Sendable {
        /// Messages fed to the source, at least the number asked for (whole passes over the framed stream).
        package var messages: Int
        /// Prices the source published: one per message when every message was read.
        package var published: Int
        package var nanosecondsPerMessage: Double
    }

    /// The trade message number `index` of the flood: Finnhub's format, one trade, the prices the `ingest` part's
    /// exchange floods with (its time stamps are the clock's), and the lines of that part's replay file.
    package static func floodMessage(_ index: Int) -> String {
        "{\"type\":\"trade\",\"data\":[{\"p\":\(60000 + index % 1000).\(index % 100),"
            + "\"s\":\"BINANCE:BTCUSDT\",\"t\":\(1_718_000_000_000 + index),\"v\":0.01}]}"
    }

    /// Feeds at least `messages` messages to a source on the calling thread, timing them.
    package static func run(messages: Int) -> Outcome {
        let sink = CountingSink()
        let dialer = MemoryDialer()
        let key: [UInt8] = Array(1...16)
        let url = WebSocketURL(isSecure: false, host: "127.0.0.1", port: 9)
        let instruments = [("BINANCE:BTCUSDT", "BTC"), ("BINANCE:ETHUSDT", "ETH")].map { instrument, symbol in
            // Both are valid symbols.
            (instrument, try! Symbol(validating: symbol))
        }
        let source = VenueSource(
            adapter: FinnhubVenue(),
            configuration: VenueSource.Configuration(
                url: url, instruments: instruments,
                liveness: FinnhubVenue().liveness),
            symbolMap: SymbolMap(), sink: sink, stats: SourceStatsRecorder(name: "finnhub", clock: SystemFeedClock()),
            scheduler: IdleScheduler(), dialer: dialer, sha1: FeedCrypto.sha1, keyBytes: { key }, logger: .disabled)
        source.start()
        // The venue's answer to the upgrade, with the accept value the source's own handshake expects.
        let accept = WebSocketHandshake(url: url, keyBytes: key, sha1: FeedCrypto.sha1).expectedAccept
        let upgrade = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(accept)\r\n\r\n"
        Array(upgrade.utf8).withUnsafeBytes { source.transport(dialer.transport, received: $0) }
        source.transportReadFinished(dialer.transport)

        var stream: [UInt8] = []
        var perPass = 0
        while stream.count < 1 << 20 {
            let text = Array(floodMessage(perPass).utf8)
            // Server frames are unmasked; these messages are under 126 bytes.
            stream += [0x81, UInt8(text.count)] + text
            perPass += 1
        }
        let passes = max(1, (messages + perPass - 1) / perPass)
        let start = MonotonicClock.nanoseconds()
        stream.withUnsafeBytes { all in
            for _ in 0..<passes {
                // As on the loop: one call per 16 KiB TLS record, and the end of the batch after one socket read
                // (`EventLoop.readBufferSize`, 64 KiB) of them.
                var offset = 0
                while offset < all.count {
                    let end = min(all.count, offset + 16 * 1024)
                    source.transport(dialer.transport, received: UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                    offset = end
                    if offset % EventLoop.readBufferSize == 0 || offset == all.count {
                        source.transportReadFinished(dialer.transport)
                    }
                }
            }
        }
        let elapsed = MonotonicClock.nanoseconds() - start
        return Outcome(
            messages: passes * perPass, published: sink.count.load(ordering: .relaxed),
            nanosecondsPerMessage: Double(elapsed) / Double(passes * perPass))
    }

    private final class MemoryTransport: FeedTransport {
        func send(_ bytes: [UInt8]) {}
        func close(afterFlush: Bool) {}
    }

    private final class MemoryDialer: FeedDialer {
        let transport = MemoryTransport()

        func dial(
            _ url: WebSocketURL, delegate: any FeedTransportDelegate,
            completion: @escaping (Result<any FeedTransport, FeedDialError>) -> Void
        ) {
            completion(.success(transport))
        }
    }

    /// Timers that never fire: the run is shorter than any liveness deadline.
    private final class IdleScheduler: FeedScheduler {
        let clock: any FeedClock = SystemFeedClock()
        private var next: UInt64 = 0

        func schedule(afterNanoseconds nanoseconds: Int64, _ body: @escaping () -> Void) -> FeedTimer {
            next += 1
            return FeedTimer(id: next)
        }

        func cancel(_ timer: FeedTimer) {}
    }

    /// Counts what the source publishes (once per read, not per message).
    private final class CountingSink: PriceSink {
        let count = Atomic<Int>(0)

        func publish(_ ticks: [PriceTick]) -> Int {
            count.add(ticks.count, ordering: .relaxed)
            return ticks.count
        }
    }
}
