public import CoinWatchProto
import CoinWatchRPC

/// Streams that resume by themselves: for dashboards and services that hold a stream open for days, through server
/// restarts and, in a cluster, a node going away.
extension CoinWatchClient {
    /// Follows any server-streaming method of the schema: a call now, and a new one each time the last was lost
    /// (see `FollowStream`), each on the connection the follow has just made.
    ///
    /// ```swift
    /// for await event in client.follow(V1.CoinWatch.streamAlerts, V1.StreamAlertsRequest(deviceID: "phone-1")) {
    ///     switch event {
    ///     case .element(let alert): print(alert.symbol)
    ///     case .state(let state): print(state)
    ///     }
    /// }
    /// ```
    public func follow<Request, Response>(
        _ method: WireMethod<Request, Response>, _ request: Request, metadata: [String: String] = [:],
        options: FollowOptions = FollowOptions()
    ) -> FollowStream<Response> {
        FollowStream(client: self, options: options) { connection in
            connection.serverStream(method, request, metadata: metadata, bufferLimit: options.bufferLimit)
        }
    }

    /// Live prices that resume by themselves (`streamPrices`, followed): each `.connected` starts a stream whose
    /// sequence numbers start again at 1.
    public func followPrices(
        symbols: [String] = [], minInterval: Duration = .zero, onlyChanges: Bool = false,
        options: FollowOptions = FollowOptions()
    ) -> FollowStream<V1.PriceUpdate> {
        follow(
            V1.CoinWatch.streamPrices, V1.StreamPricesRequest(symbols: symbols, minInterval: minInterval, onlyChanges: onlyChanges),
            options: options)
    }

    /// The device's alerts, resuming by themselves (`streamAlerts`, followed): each new stream sends the pending
    /// alerts first again.
    public func followAlerts(device: String, options: FollowOptions = FollowOptions()) -> FollowStream<V1.Alert> {
        follow(V1.CoinWatch.streamAlerts, V1.StreamAlertsRequest(deviceID: device), options: options)
    }
}
