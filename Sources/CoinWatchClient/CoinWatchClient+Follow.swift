public import CoinWatchProto
public import CoinWatchRPC

/// Streams that resume by themselves: for dashboards and services that hold a stream open for days, through server
/// restarts and, in a cluster, a node going away.
extension CoinWatchClient {
    /// Follows the streams `open` makes: one now, and a new one each time the last was lost (see `FollowStream`).
    ///
    /// ```swift
    /// for await event in client.follow({ $0.streamAlerts(device: "phone-1") }) {
    ///     switch event {
    ///     case .element(let alert): print(alert.symbol)
    ///     case .state(let state): print(state)
    ///     }
    /// }
    /// ```
    public func follow<Item: Sendable>(
        options: FollowOptions = FollowOptions(), _ open: @escaping @Sendable (CoinWatchClient) -> RPCResponseStream<Item>
    ) -> FollowStream<Item> {
        FollowStream(client: self, options: options, open: open)
    }

    /// Live prices that resume by themselves (`streamPrices`, followed): each `.connected` starts a stream whose
    /// sequence numbers start again at 1.
    public func followPrices(
        symbols: [String] = [], minInterval: Duration = .zero, onlyChanges: Bool = false,
        options: FollowOptions = FollowOptions()
    ) -> FollowStream<V1.PriceUpdate> {
        let request = V1.StreamPricesRequest(symbols: symbols, minInterval: minInterval, onlyChanges: onlyChanges)
        return follow(options: options) { client in
            client.stream(V1.CoinWatch.streamPrices, request, bufferLimit: options.bufferLimit)
        }
    }

    /// The device's alerts, resuming by themselves (`streamAlerts`, followed): each new stream sends the pending
    /// alerts first again.
    public func followAlerts(device: String, options: FollowOptions = FollowOptions()) -> FollowStream<V1.Alert> {
        let request = V1.StreamAlertsRequest(deviceID: device)
        return follow(options: options) { client in
            client.stream(V1.CoinWatch.streamAlerts, request, bufferLimit: options.bufferLimit)
        }
    }
}
