import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC

extension PriceHub {
    /// `StreamPrices`, `GetPrices` and `PublishPrices`, ready for `RPCServer(configuration:methods:)`.
    ///
    /// - Parameter publishToken: when non-empty, `PublishPrices` requires it (Hello auth token or `authorization`
    ///   metadata); nil or empty leaves publishing open, which suits loopback-only servers.
    public func methods(publishToken: String? = nil) -> [RPCMethod] {
        [streamPricesMethod(), getPricesMethod(), publishPricesMethod(publishToken: publishToken)]
    }

    /// `StreamPrices`: runs on the connection's loop; the snapshot goes out before the handler returns.
    public func streamPricesMethod() -> RPCMethod {
        .serverStream(V1.CoinWatch.streamPrices, onLoop: { [self] request, stream throws(RPCError) in
            let subscription = try StreamPricesSubscription(validating: request, configuration: configuration)
            try subscribe(stream, subscription)
        })
    }

    /// `GetPrices`: answered inline from memory.
    public func getPricesMethod() -> RPCMethod {
        .unary(V1.CoinWatch.getPrices, inline: { [self] request, _ throws(RPCError) in
            let symbols = try StreamPricesSubscription.symbols(request.symbols, configuration: configuration)
            return V1.GetPricesResponse(prices: snapshot(symbols: symbols))
        })
    }

    /// `PublishPrices`: validates every tick first (nothing is applied when one is invalid), then publishes them
    /// as one batch on the calling loop.
    public func publishPricesMethod(publishToken: String? = nil) -> RPCMethod {
        let token = PublishToken(publishToken)
        return .unary(V1.CoinWatch.publishPrices, inline: { [self] request, context throws(RPCError) in
            if let token, !token.accepts(context) {
                throw RPCError(code: .unauthenticated, message: "PublishPrices requires the publish token")
            }
            let ticks = try validatedTicks(request)
            let applied = publish(ticks)
            guard applied == ticks.count else {
                if isClosed { throw RPCError(code: .unavailable, message: "the price hub is shutting down") }
                throw RPCError(
                    code: .resourceExhausted,
                    message: "the hub tracks at most \(configuration.maxKnownSymbols) symbols; ticks for new symbols "
                        + "were refused (\(applied) of \(ticks.count) applied)")
            }
            return V1.PublishPricesResponse(accepted: UInt32(applied))
        })
    }

    func validatedTicks(_ request: V1.PublishPricesRequest) throws(RPCError) -> [PriceTick] {
        guard request.ticks.count <= configuration.maxTicksPerPublish else {
            throw RPCError(
                code: .invalidArgument,
                message: "ticks: at most \(configuration.maxTicksPerPublish) ticks per call "
                    + "(got \(request.ticks.count))")
        }
        let now = WallClock.milliseconds()
        var ticks: [PriceTick] = []
        ticks.reserveCapacity(request.ticks.count)
        for (index, tick) in request.ticks.enumerated() {
            do {
                ticks.append(try PriceWire.priceTick(tick, field: "ticks[\(index)]", nowMs: now))
            } catch {
                throw RPCError(code: .invalidArgument, message: error.description)
            }
        }
        return ticks
    }
}
