// A small service's use of CoinWatch through the CoinWatchClient library: it sets a device's alert rule, reads the
// device's settings back with GetSettings, and follows live prices with StreamPrices until it has seen the snapshot
// (the latest price of each symbol, marked as such) and a few live updates after it.
//
//   coinwatch-client-example [HOST:PORT] [--updates N]
//
// Exits 0 when every call succeeded, 1 (with the error on stderr) otherwise.
import CoinWatchClient
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

#if canImport(Glibc)
import Glibc
#endif

/// Fails the run with one line on stderr.
func fail(_ message: String) -> Never {
    let line = Array("coinwatch-client-example: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(1)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var liveUpdates = 3
if let flag = arguments.firstIndex(of: "--updates") {
    guard flag + 1 < arguments.count, let count = Int(arguments[flag + 1]), count >= 0 else {
        fail("--updates needs a whole number")
    }
    liveUpdates = count
    arguments.removeSubrange(flag...(flag + 1))
}
let address = arguments.first ?? "127.0.0.1:7878"

do {
    let client = CoinWatchClient(configuration: try .init(address: address))
    defer { client.close() }

    // SaveSettings (a patch of one symbol), then GetSettings: the same device, in any UUID spelling.
    let device = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    let saved = try await client.setRule(device: device, symbol: "BTC", below: ExactDecimal(60_000), above: nil)
    let settings = try await client.settings(device: String(device.lowercased().map { $0 == "-" ? "_" : $0 }))
    guard settings.version == saved.version, let rule = settings.rules["BTC"] else {
        fail("GetSettings did not return the saved settings: \(settings)")
    }
    let below = rule.below.flatMap(ExactDecimal.init).map(String.init(describing:)) ?? "off"
    print("settings of \(settings.deviceID): version \(settings.version), BTC below \(below)")

    // StreamPrices: the latest price of each symbol first (the snapshot, its last message marked), then live updates.
    var live = 0
    let stream = client.streamPrices(symbols: ["BTC", "ETH"])
    for try await update in stream {
        let price = update.price.flatMap(ExactDecimal.init).map(String.init(describing:)) ?? "?"
        let kind = update.snapshotEnd ? "snapshot, last" : update.snapshot ? "snapshot" : "live"
        print("#\(update.sequence) \(update.symbol) \(price) (\(kind))")
        if !update.snapshot {
            live += 1
            if live >= liveUpdates { break }
        }
    }
    guard live >= liveUpdates else { fail("the price stream ended after \(live) live updates") }
} catch let error as RPCError {
    fail("\(error.code): \(error.message)")
} catch {
    fail("\(error)")
}
