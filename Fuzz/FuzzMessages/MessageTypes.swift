import CoinWatchProto

/// Every message type of the schema, in schema order: the first input byte indexes this list, so the seed corpus
/// depends on the order. `scripts/fuzz` checks it against the generated list in
/// `Tests/CoinWatchProtoTests/Generated/V1+Random.pb.swift` and refuses to run when they differ.
let fuzzedMessageTypes: [any WireMessage.Type] = [
    V1.Decimal.self,
    V1.AlertRule.self,
    V1.Settings.self,
    V1.GetSettingsRequest.self,
    V1.GetSettingsResponse.self,
    V1.SaveSettingsRequest.self,
    V1.SaveSettingsResponse.self,
    V1.DeleteSettingsRequest.self,
    V1.DeleteSettingsResponse.self,
    V1.Tick.self,
    V1.StreamPricesRequest.self,
    V1.PriceUpdate.self,
    V1.GetPricesRequest.self,
    V1.GetPricesResponse.self,
    V1.PublishPricesRequest.self,
    V1.PublishPricesResponse.self,
    V1.StreamAlertsRequest.self,
    V1.Alert.self,
    V1.HealthCheckRequest.self,
    V1.HealthCheckResponse.self,
    V1.Frame.self,
    V1.Status.self,
    V1.Hello.self,
    V1.Welcome.self,
    V1.Call.self,
    V1.Message.self,
    V1.End.self,
    V1.Cancel.self,
    V1.Ping.self,
    V1.Pong.self,
    V1.GoAway.self,
    V1.ConnectionError.self,
]
