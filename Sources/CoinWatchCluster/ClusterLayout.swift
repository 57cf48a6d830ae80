/// The names the cluster's nodes agree on: subjects, streams and buckets (docs/SCALING.md draws them).
///
/// Declared together, as `StorageLayout` declares the LevelDB prefixes, so a new use of NATS adds its name here
/// and every node spells it the same way.
enum ClusterLayout {
    /// The price bus: one subject per symbol (symbols are `A-Z 0-9`, so one token).
    static func priceSubject(_ symbol: String) -> String { "coinwatch.prices.\(symbol)" }
    static let priceSubjects = "coinwatch.prices.*"
    /// The replay log of every tick, for alert owners after a failover.
    static let priceStream = "COINWATCH_PRICES"
    /// How long the replay log keeps ticks: far longer than any failover window.
    static let priceStreamMaxAgeNs: Int64 = 15 * 60 * 1_000_000_000

    /// Alerts an owner fired, for the other nodes' StreamAlerts calls: one subject per shard (`NN`, two digits).
    static func alertSubject(shard: Int) -> String { "coinwatch.alerts.\(shardToken(shard))" }
    /// A relayed alert another node delivered to one of its StreamAlerts calls, for the owner's outbox: per shard.
    static func deliveredSubject(shard: Int) -> String { "\(deliveredPrefix)\(shardToken(shard))" }
    static let deliveredPrefix = "coinwatch.alerts.delivered."
    /// Both: the fired alerts' subjects and the delivery notices'.
    static let alertSubjects = "coinwatch.alerts.>"

    /// A device's outbox entry for a symbol in the alerts bucket, and the filter of one shard's entries.
    static func outboxKey(shard: Int, device: String, symbol: String) -> String {
        "out.\(shardToken(shard)).\(keyToken(device)).\(symbol)"
    }
    static func outboxFilter(shard: Int) -> String { "out.\(shardToken(shard)).>" }
    static func shardToken(_ shard: Int) -> String { shard < 10 ? "0\(shard)" : "\(shard)" }

    /// The header in which a bus message carries when its publisher handed it to the library (wall-clock
    /// milliseconds), so a receiver can tell a tick that waited out a partition from a fresh one.
    static let sentHeader = "Coinwatch-Sent-Ms"
    /// The header in which a bus message says how many ticks its publisher handed to the library with it and
    /// sends after it (absent or 0: the last of its batch), so a receiver hands a batch to its hub whole.
    static let batchLeftHeader = "Coinwatch-Batch-Left"

    /// Symbol → last tick, for the snapshot of a node that starts or reconnects.
    static let lastPricesBucket = "coinwatch-prices"
    /// Device → settings record: the store of record in cluster mode.
    static let settingsBucket = "coinwatch-settings"
    /// Device → its push registration (`coinwatch.v1.DeviceRegistration`, empty once unregistered), for the node
    /// owning the device's shard, which sends its pushes.
    static let devicesBucket = "coinwatch-devices"
    /// Credential store key (`auth:key:<id>`, `auth:device:<device>`) → its record: the credentials of record.
    static let credentialsBucket = "coinwatch-credentials"
    /// Leases: `feed.<name>`, `shard.<NN>`; the bucket's age limit is the lease TTL.
    static let leasesBucket = "coinwatch-leases"
    /// Replicated alert state per shard: `arm.<NN>.<device>`, `out.<NN>.<device>.<SYMBOL>`, `ckpt.<NN>`.
    static let alertsBucket = "coinwatch-alerts"
    /// `node.<id>` → what a live node says about itself, written every few seconds, gone when it stops.
    static let nodesBucket = "coinwatch-nodes"

    /// A KV key made from text that may hold characters KV keys do not allow (device ids: `.` and `:`).
    ///
    /// KV keys allow `A-Z a-z 0-9 - _ / = .` (and no empty token); `=` is in no device id, symbol or node id,
    /// so `=XX` escapes are unambiguous: `.` → `=2E`, `:` → `=3A`, any other byte outside the set → `=XX`.
    static func keyToken(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += "=" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }

    /// The text a `keyToken` was made from; nil when the token is not one.
    static func text(ofKeyToken token: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(token.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "=") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
