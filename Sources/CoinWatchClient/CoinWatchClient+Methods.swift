import CoinWatchCore
public import CoinWatchModel
public import CoinWatchProto
public import CoinWatchRPC

/// Typed conveniences for each CoinWatch method. They take and return the
/// schema's value types, so nothing here hides a field the wire has.
extension CoinWatchClient {
    /// The device's settings; NOT_FOUND when it has none.
    public func settings(device: String, timeout: Duration? = nil) async throws(RPCError) -> V1.Settings {
        let response = try await call(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: device), timeout: timeout)
        return response.settings ?? V1.Settings()
    }

    /// Patches the device's settings (only the symbols named change) and returns what is stored.
    public func saveSettings(_ request: V1.SaveSettingsRequest, timeout: Duration? = nil) async throws(RPCError) -> V1.Settings {
        let response = try await call(V1.CoinWatch.saveSettings, request, timeout: timeout)
        return response.settings ?? V1.Settings()
    }

    /// Sets one symbol's thresholds (nil or zero = off); other symbols keep theirs. The save's warnings (a rule for
    /// a symbol the server has never priced) are in the whole response: `call(V1.CoinWatch.saveSettings,
    /// V1.SaveSettingsRequest(device:symbol:below:above:))`.
    public func setRule(
        device: String, symbol: String, below: ExactDecimal?, above: ExactDecimal?, expectedVersion: UInt64? = nil,
        timeout: Duration? = nil
    ) async throws(RPCError) -> V1.Settings {
        let request = V1.SaveSettingsRequest(
            device: device, symbol: symbol, below: below, above: above, expectedVersion: expectedVersion)
        return try await saveSettings(request, timeout: timeout)
    }

    /// Removes one symbol's rule; other symbols keep theirs.
    public func removeRule(
        device: String, symbol: String, expectedVersion: UInt64? = nil, timeout: Duration? = nil
    ) async throws(RPCError) -> V1.Settings {
        var request = V1.SaveSettingsRequest(deviceID: device, removeSymbols: [symbol])
        request.precondition = expectedVersion.map { .expectedVersion($0) }
        return try await saveSettings(request, timeout: timeout)
    }

    /// Deletes the device's settings; returns whether there were any.
    @discardableResult
    public func deleteSettings(device: String, expectedVersion: UInt64? = nil, timeout: Duration? = nil) async throws(RPCError) -> Bool {
        var request = V1.DeleteSettingsRequest(deviceID: device)
        request.precondition = expectedVersion.map { .expectedVersion($0) }
        return try await call(V1.CoinWatch.deleteSettings, request, timeout: timeout).existed
    }

    /// The latest prices (all symbols when `symbols` is empty), ordered by symbol.
    public func prices(symbols: [String] = [], timeout: Duration? = nil) async throws(RPCError) -> [V1.Tick] {
        try await call(V1.CoinWatch.getPrices, V1.GetPricesRequest(symbols: symbols), timeout: timeout).prices
    }

    /// Pushes ticks, as an external feeder does; returns how many were applied.
    @discardableResult
    public func publish(_ ticks: [V1.Tick], timeout: Duration? = nil) async throws(RPCError) -> UInt32 {
        try await call(V1.CoinWatch.publishPrices, V1.PublishPricesRequest(ticks: ticks), timeout: timeout).accepted
    }

    /// Whether the server is serving.
    public func health(timeout: Duration? = nil) async throws(RPCError) -> V1.HealthCheckResponse.ServingStatus {
        try await healthCheck(timeout: timeout).status
    }

    /// The whole health answer: the serving status, the state of each price source, push delivery's state and, for a
    /// cluster node, its cluster state.
    public func healthCheck(timeout: Duration? = nil) async throws(RPCError) -> V1.HealthCheckResponse {
        try await call(V1.Health.check, V1.HealthCheckRequest(), timeout: timeout)
    }

    /// Registers the device's APNs token (hex), or replaces it; a disabled device becomes active again. Returns the
    /// registration as stored. When the call claims a device that has no secret, the device's secret is in the
    /// whole response, shown that once: `call(V1.CoinWatch.registerDevice, V1.RegisterDeviceRequest(…))`.
    public func registerDevice(
        device: String, apnsToken: String, environment: V1.PushEnvironment = .production, topic: String = "",
        locale: String = "", timeout: Duration? = nil
    ) async throws(RPCError) -> V1.DeviceRegistration {
        let request = V1.RegisterDeviceRequest(
            deviceID: device, apnsToken: apnsToken, environment: environment, topic: topic, locale: locale)
        return try await call(V1.CoinWatch.registerDevice, request, timeout: timeout).registration ?? V1.DeviceRegistration()
    }

    /// Removes the device's registration; returns whether there was one.
    @discardableResult
    public func unregisterDevice(device: String, timeout: Duration? = nil) async throws(RPCError) -> Bool {
        try await call(V1.CoinWatch.unregisterDevice, V1.UnregisterDeviceRequest(deviceID: device), timeout: timeout).existed
    }

    /// The device's registration and delivery state; NOT_FOUND when it is not registered.
    public func device(_ device: String, timeout: Duration? = nil) async throws(RPCError) -> V1.DeviceRegistration {
        try await call(V1.CoinWatch.getDevice, V1.GetDeviceRequest(deviceID: device), timeout: timeout).registration
            ?? V1.DeviceRegistration()
    }

    /// Live prices: the current price of each symbol first, then updates.
    public func streamPrices(
        symbols: [String] = [], minInterval: Duration = .zero, onlyChanges: Bool = false
    ) -> RPCResponseStream<V1.PriceUpdate> {
        stream(V1.CoinWatch.streamPrices, V1.StreamPricesRequest(symbols: symbols, minInterval: minInterval, onlyChanges: onlyChanges))
    }

    /// The device's alerts: pending ones first, then live ones.
    public func streamAlerts(device: String) -> RPCResponseStream<V1.Alert> {
        stream(V1.CoinWatch.streamAlerts, V1.StreamAlertsRequest(deviceID: device))
    }
}

extension V1.StreamPricesRequest {
    /// A subscription with its interval as a `Duration` (whole milliseconds on the wire).
    init(symbols: [String], minInterval: Duration, onlyChanges: Bool) {
        self.init(symbols: symbols, minIntervalMs: UInt32(clamping: minInterval.inMilliseconds), onlyChanges: onlyChanges)
    }
}

extension V1.SaveSettingsRequest {
    /// A save that sets one symbol's thresholds (nil or zero = off) and leaves the device's other symbols as they are.
    public init(device: String, symbol: String, below: ExactDecimal?, above: ExactDecimal?, expectedVersion: UInt64? = nil) {
        self.init(deviceID: device)
        setRules[symbol] = V1.AlertRule(below: below.map(V1.Decimal.init), above: above.map(V1.Decimal.init))
        precondition = expectedVersion.map { .expectedVersion($0) }
    }
}
