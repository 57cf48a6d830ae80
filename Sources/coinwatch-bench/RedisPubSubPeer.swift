import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The peer of `stream` mode: Redis pub/sub, one publisher and N subscribers on
/// one channel, measured the same way (deliveries/s, publish-to-receive latency).
///
/// Plain blocking sockets speaking RESP, one thread per subscriber: each `recv`
/// returns many messages, so the per-message cost is parsing, as for CoinWatch.
struct RedisPubSubPeer {
    let options: BenchOptions

    func run() throws -> Int32 {
        let channel = "coinwatch-bench"
        let phase = Phase()
        let counters = (0..<options.subscribers).map { _ in SubscriberCounter() }
        var threads: [Thread] = []
        let ready = DispatchSemaphore(value: 0)
        for counter in counters {
            let fd = try RawSocket.connect(host: options.host, port: options.port)
            let thread = Thread {
                RawSocket.sendAll(fd, RESP.command(["SUBSCRIBE", channel]))
                var parser = RESP.Parser()
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                var subscribed = false
                while true {
                    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if n <= 0 { break }
                    parser.feed(buffer[..<n]) { message in
                        if !subscribed {
                            subscribed = true
                            ready.signal()
                            return
                        }
                        guard phase.current == .measuring, let sent = UInt64(String(decoding: message, as: UTF8.self)) else { return }
                        counter.record(latencyNanos: nowNanos() &- sent)
                    }
                }
                close(fd)
            }
            thread.start()
            threads.append(thread)
            counter.fd = fd
        }
        for _ in counters { ready.wait() }
        let publisher = try RawSocket.connect(host: options.host, port: options.port)
        let stop = Atomic<Bool>(false)
        let publisherThread = Thread {
            // Pipelined PUBLISH: up to 64 outstanding, replies read in bulk.
            var outstanding = 0
            var reply = [UInt8](repeating: 0, count: 1 << 16)
            let interval = options.rate > 0 ? 1e9 / options.rate : 0
            var nextSend = Double(nowNanos())
            while !stop.load(ordering: .relaxed) {
                if interval > 0 {
                    let now = Double(nowNanos())
                    if now < nextSend { usleep(UInt32(max(1, (nextSend - now) / 1000))); continue }
                    nextSend += interval
                }
                RawSocket.sendAll(publisher, RESP.command(["PUBLISH", channel, String(nowNanos())]))
                outstanding += 1
                if outstanding >= 64 || interval > 0 {
                    let n = reply.withUnsafeMutableBytes { recv(publisher, $0.baseAddress, $0.count, 0) }
                    if n <= 0 { break }
                    outstanding -= reply[..<n].filter { $0 == UInt8(ascii: "\n") }.count
                }
            }
        }
        publisherThread.start()
        sleepSeconds(options.warmup)
        phase.set(.measuring)
        let start = nowNanos()
        sleepSeconds(options.duration)
        phase.set(.stopping)
        let elapsed = Double(nowNanos() - start) / 1e9
        stop.store(true, ordering: .relaxed)
        for counter in counters { shutdown(counter.fd, Int32(SHUT_RDWR)) }
        shutdown(publisher, Int32(SHUT_RDWR))
        close(publisher)
        var histogram = LatencyHistogram()
        for counter in counters { histogram.merge(counter.histogram) }
        let sorted = histogram.samples.sorted()
        let rate = Double(histogram.count) / elapsed
        let p50 = histogram.percentile(0.5, sorted: sorted)
        let p99 = histogram.percentile(0.99, sorted: sorted)
        print("redis pub/sub: \(options.subscribers) subscribers, \(formatMillis(elapsed)) s")
        print("  deliveries/s  \(Int(rate.rounded()))")
        print("  latency ms    p50 \(formatMillis(p50))  p99 \(formatMillis(p99))")
        if options.json {
            print("{\"mode\":\"stream\",\"peer\":\"redis-pubsub\",\"subscribers\":\(options.subscribers),"
                + "\"deliveries\":\(histogram.count),\"deliveries_per_second\":\(Int(rate.rounded())),"
                + "\"p50_ms\":\(formatMillis(p50)),\"p99_ms\":\(formatMillis(p99)),\"gaps\":0}")
        }
        return 0
    }
}

/// One subscriber's samples; written by its thread, read after it stopped.
final class SubscriberCounter: @unchecked Sendable {
    // @unchecked Sendable: `histogram` is written only by the subscriber's thread while
    // measuring and read by the main thread after the phase moved to stopping
    // (a small race at the boundary can only drop or add the last sample).
    var histogram = LatencyHistogram(capacity: 1 << 16)
    var fd: Int32 = -1

    func record(latencyNanos: UInt64) {
        histogram.record(nanoseconds: latencyNanos)
    }
}

/// Just enough RESP to subscribe and read pushed messages.
enum RESP {
    static func command(_ parts: [String]) -> [UInt8] {
        var out = "*\(parts.count)\r\n"
        for part in parts { out += "$\(part.utf8.count)\r\n\(part)\r\n" }
        return Array(out.utf8)
    }

    /// Extracts the payload of each `message` push (`*3 $7 message $<ch> $<payload>`);
    /// the first array (the SUBSCRIBE confirmation) is reported as an empty payload.
    struct Parser {
        private var pending: [UInt8] = []

        mutating func feed(_ bytes: ArraySlice<UInt8>, _ onMessage: ([UInt8]) -> Void) {
            pending.append(contentsOf: bytes)
            var index = 0
            while let (payload, next) = Self.parseArray(pending, from: index) {
                onMessage(payload)
                index = next
            }
            pending.removeFirst(index)
        }

        /// Parses one array of bulk strings/integers; returns its last element and the index after it.
        static func parseArray(_ bytes: [UInt8], from start: Int) -> ([UInt8], Int)? {
            guard start < bytes.count, bytes[start] == UInt8(ascii: "*"), let (count, afterCount) = line(bytes, start + 1) else { return nil }
            var index = afterCount
            var last: [UInt8] = []
            for _ in 0..<count {
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: "$") {
                    guard let (length, afterLength) = line(bytes, index + 1), afterLength + length + 2 <= bytes.count else { return nil }
                    last = Array(bytes[afterLength..<(afterLength + length)])
                    index = afterLength + length + 2
                } else if bytes[index] == UInt8(ascii: ":") {
                    guard let (_, after) = line(bytes, index + 1) else { return nil }
                    last = []
                    index = after
                } else {
                    return nil
                }
            }
            return (last, index)
        }

        /// A decimal number ending in CRLF starting at `start`.
        static func line(_ bytes: [UInt8], _ start: Int) -> (Int, Int)? {
            var value = 0
            var index = start
            while index < bytes.count, bytes[index] != UInt8(ascii: "\r") {
                value = value * 10 + Int(bytes[index]) - 48
                index += 1
            }
            guard index + 1 < bytes.count else { return nil }
            return (value, index + 2)
        }
    }
}

/// Blocking IPv4 sockets for the peer client.
enum RawSocket {
    static func connect(host: String, port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw BenchError("cannot connect to \(host):\(port): \(String(cString: strerror(errno)))")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
