import CoinWatchModel
import CoinWatchRPC
import CoinWatchProto

/// How each result reads, as text for people and as `--json` objects for scripts.
///
/// The JSON field names here are the stable interface documented in `coinwatch --help`: change them
/// only with that text (and its golden test).
enum Presenter {
    // MARK: Settings

    static func settingsText(_ settings: V1.Settings) -> String {
        var out = "device   \(settings.deviceID)\n"
        out += "version  \(settings.version)\n"
        out += "updated  \(TimeText.iso8601(milliseconds: settings.updatedAtMs))\n"
        guard !settings.rules.isEmpty else { return out + "rules    none\n" }
        return out + "\n" + rulesTable(settings).render()
    }

    /// The rules of `settings` by symbol, thresholds aligned, `-` for a side that is off; `extra` adds a column.
    static func rulesTable(_ settings: V1.Settings, extra: (header: String, cell: (String) -> String)? = nil) -> TextTable {
        var table = TextTable(
            headers: ["SYMBOL", "BELOW", "ABOVE"] + (extra.map { [$0.header] } ?? []),
            alignments: [.left, .decimal, .decimal] + (extra == nil ? [] : [.decimal]))
        for symbol in settings.rules.keys.sorted() {
            let rule = settings.rules[symbol]!
            table.append([
                symbol,
                DecimalDisplay.threshold(rule.below)?.description ?? "-",
                DecimalDisplay.threshold(rule.above)?.description ?? "-",
            ] + (extra.map { [$0.cell(symbol)] } ?? []))
        }
        return table
    }

    static func settingsJSON(_ settings: V1.Settings) -> JSONObject {
        var object = JSONObject()
        object.string("device_id", settings.deviceID)
        object.integer("version", settings.version)
        object.integer("updated_at_ms", settings.updatedAtMs)
        var rules = JSONObject()
        for symbol in settings.rules.keys.sorted() {
            let rule = settings.rules[symbol]!
            var entry = JSONObject()
            entry.decimal("below", DecimalDisplay.threshold(rule.below))
            entry.decimal("above", DecimalDisplay.threshold(rule.above))
            rules.object(symbol, entry)
        }
        object.object("rules", rules)
        return object
    }

    /// A save's answer: the settings, and the device's secret when this save claimed the device.
    static func savedSettingsText(_ saved: V1.SaveSettingsResponse) -> String {
        settingsText(saved.settings ?? V1.Settings()) + secretText(saved.deviceSecret, issuedBy: "first save")
    }

    static func savedSettingsJSON(_ saved: V1.SaveSettingsResponse) -> JSONObject {
        var object = settingsJSON(saved.settings ?? V1.Settings())
        if !saved.deviceSecret.isEmpty { object.string("device_secret", saved.deviceSecret) }
        return object
    }

    /// A registration's answer: the registration, and the device's secret when this registration claimed it.
    static func registeredText(_ registered: V1.RegisterDeviceResponse) -> String {
        deviceText(registered.registration ?? V1.DeviceRegistration())
            + secretText(registered.deviceSecret, issuedBy: "registration")
    }

    static func registeredJSON(_ registered: V1.RegisterDeviceResponse) -> JSONObject {
        var object = deviceJSON(registered.registration ?? V1.DeviceRegistration())
        if !registered.deviceSecret.isEmpty { object.string("device_secret", registered.deviceSecret) }
        return object
    }

    /// The lines that show a device's secret the answering call issued; nothing when it issued none.
    static func secretText(_ secret: String, issuedBy call: String) -> String {
        guard !secret.isEmpty else { return "" }
        return "\ndevice secret  \(secret)\n"
            + "  issued by this \(call) and shown only now: the device passes it as its token.\n"
    }

    static func deletedText(device: String, existed: Bool) -> String {
        existed ? "deleted the settings of device '\(device)'\n" : "device '\(device)' had no settings\n"
    }

    static func deletedJSON(device: String, existed: Bool) -> JSONObject {
        var object = JSONObject()
        object.string("device_id", device)
        object.bool("existed", existed)
        return object
    }

    // MARK: Prices

    static func pricesText(_ ticks: [V1.Tick]) -> String {
        guard !ticks.isEmpty else { return "no prices\n" }
        var table = TextTable(headers: ["SYMBOL", "PRICE", "TIME"], alignments: [.left, .decimal, .left])
        for tick in ticks {
            table.append([tick.symbol, DecimalDisplay.text(tick.price) ?? "-", TimeText.iso8601(milliseconds: tick.timeMs)])
        }
        return table.render()
    }

    static func tickJSON(_ tick: V1.Tick) -> JSONObject {
        var object = JSONObject()
        object.string("symbol", tick.symbol)
        object.raw("price", DecimalDisplay.json(tick.price))
        object.integer("time_ms", tick.timeMs)
        return object
    }

    static func pricesJSON(_ ticks: [V1.Tick]) -> JSONObject {
        var object = JSONObject()
        object.array("prices", ticks.map(tickJSON))
        return object
    }

    static func publishedText(accepted: UInt32) -> String {
        "accepted \(accepted) tick\(accepted == 1 ? "" : "s")\n"
    }

    static func publishedJSON(accepted: UInt32) -> JSONObject {
        var object = JSONObject()
        object.integer("accepted", accepted)
        return object
    }

    // MARK: Streams

    /// `BTC 64250.5 seq=12 time=2024-05-01T12:00:00.123Z`: one line per update, for pipes.
    /// A stale symbol ends with ` stale`; a price from several sources with ` sources=N`.
    static func updateLine(_ update: V1.PriceUpdate) -> String {
        "\(update.symbol) \(DecimalDisplay.text(update.price) ?? "-") seq=\(update.sequence)"
            + " time=\(TimeText.iso8601(milliseconds: update.sourceTimeMs))"
            + (update.sources > 1 ? " sources=\(update.sources)" : "") + (update.stale ? " stale" : "")
    }

    static func updateJSON(_ update: V1.PriceUpdate) -> JSONObject {
        var object = JSONObject()
        object.string("symbol", update.symbol)
        object.raw("price", DecimalDisplay.json(update.price))
        object.integer("source_time_ms", update.sourceTimeMs)
        object.integer("sequence", update.sequence)
        if update.stale { object.bool("stale", true) }
        if update.sources > 0 { object.integer("sources", update.sources) }
        return object
    }

    /// `above`, `below`, or the raw number of a direction this build does not know.
    static func directionName(_ direction: V1.Direction) -> String {
        switch direction {
        case .above: "above"
        case .below: "below"
        default: String(direction.rawValue)
        }
    }

    /// `2024-05-01T12:00:00.123Z  BTC  ▲ above 70000  price 70010.5  id=…`.
    static func alertLine(_ alert: V1.Alert) -> String {
        let arrow = alert.direction == .above ? "▲" : alert.direction == .below ? "▼" : "?"
        return "\(TimeText.iso8601(milliseconds: alert.timeMs))  \(alert.symbol)  \(arrow) \(directionName(alert.direction))"
            + " \(DecimalDisplay.text(alert.threshold) ?? "-")  price \(DecimalDisplay.text(alert.price) ?? "-")  id=\(alert.id)"
    }

    /// What `alerts` waits for, on stderr before the first alert: the device's rules beside the current prices, or
    /// that it has none (or that they could not be read, which does not stop the command).
    static func alertsWaitingText(
        device: String, rules: Result<(V1.Settings, [V1.Tick]), RPCError>, inShell: Bool
    ) -> String {
        let stop = inShell ? "Ctrl-C returns to the prompt" : "Ctrl-C stops"
        switch rules {
        case .success(let (settings, prices)) where !settings.rules.isEmpty:
            let out = "waiting for alerts of device \(settings.deviceID) (\(stop)); its rules:\n"
            let now = Dictionary(prices.map { ($0.symbol, $0.price) }, uniquingKeysWith: { first, _ in first })
            let table = rulesTable(settings, extra: ("NOW", { DecimalDisplay.text(now[$0] ?? nil) ?? "-" }))
            var text = out + table.render().split(separator: "\n").map { "  \($0)\n" }.joined()
            let unpriced = settings.rules.keys.filter { (now[$0] ?? nil) == nil }.sorted()
            if !unpriced.isEmpty {
                text += "  (no price yet for \(unpriced.joined(separator: ", ")): "
                    + "\(unpriced.count == 1 ? "its rule" : "their rules") cannot fire until a feed or a publisher prices "
                    + "\(unpriced.count == 1 ? "it" : "them"))\n"
            }
            return text
        case .failure(let error) where error.code != .notFound:
            return "waiting for alerts of device \(device) (\(stop))\n"
        case .success, .failure:
            let command = (inShell ? "" : "coinwatch ") + "settings set \(device) SYMBOL --below PRICE"
            return "waiting for alerts of device \(device) (\(stop)); it has no rules, so none will fire until one is "
                + "set ('\(command)')\n"
        }
    }

    static func alertJSON(_ alert: V1.Alert) -> JSONObject {
        var object = JSONObject()
        object.string("id", alert.id)
        object.string("device_id", alert.deviceID)
        object.string("symbol", alert.symbol)
        object.string("direction", directionName(alert.direction))
        object.raw("threshold", DecimalDisplay.json(alert.threshold))
        object.raw("price", DecimalDisplay.json(alert.price))
        object.integer("time_ms", alert.timeMs)
        object.string("idempotency_key", alert.idempotencyKey)
        object.string("push_interest", alert.pushInterest)
        object.string("apns_collapse_id", alert.apnsCollapseID)
        object.string("apns_payload_json", alert.apnsPayloadJSON)
        return object
    }

    // MARK: Devices

    static func environmentName(_ environment: V1.PushEnvironment) -> String {
        environment == .sandbox ? "sandbox" : "production"
    }

    static func deliveryStatusName(_ status: V1.DeliveryStatus) -> String {
        switch status {
        case .active: "active"
        case .disabled: "disabled"
        default: String(status.rawValue)
        }
    }

    static func deviceText(_ registration: V1.DeviceRegistration) -> String {
        var out = "device       \(registration.deviceID)\n"
        out += "token        \(registration.apnsToken)\n"
        out += "environment  \(environmentName(registration.environment))\n"
        out += "topic        \(registration.topic.isEmpty ? "(the server's default)" : registration.topic)\n"
        if !registration.locale.isEmpty { out += "locale       \(registration.locale)\n" }
        out += "registered   \(TimeText.iso8601(milliseconds: registration.registeredAtMs))\n"
        if registration.status == .disabled {
            out += "delivery     disabled: APNs refused the token (\(registration.disabledReason)) at "
                + "\(TimeText.iso8601(milliseconds: registration.disabledAtMs)); register again to re-enable\n"
        } else {
            out += "delivery     \(deliveryStatusName(registration.status))\n"
        }
        if registration.delivered == 0 {
            out += "delivered    none yet\n"
        } else {
            out += "delivered    \(registration.delivered), last \(TimeText.iso8601(milliseconds: registration.lastDeliveredAtMs))"
                + " id=\(registration.lastDeliveredAlertID)\n"
        }
        return out
    }

    static func deviceJSON(_ registration: V1.DeviceRegistration) -> JSONObject {
        var object = JSONObject()
        object.string("device_id", registration.deviceID)
        object.string("apns_token", registration.apnsToken)
        object.string("environment", environmentName(registration.environment))
        object.string("topic", registration.topic)
        object.string("locale", registration.locale)
        object.integer("registered_at_ms", registration.registeredAtMs)
        object.string("status", deliveryStatusName(registration.status))
        object.string("disabled_reason", registration.disabledReason)
        object.integer("disabled_at_ms", registration.disabledAtMs)
        object.integer("delivered", registration.delivered)
        object.string("last_delivered_alert_id", registration.lastDeliveredAlertID)
        object.integer("last_delivered_at_ms", registration.lastDeliveredAtMs)
        return object
    }

    static func unregisteredText(device: String, existed: Bool) -> String {
        existed ? "unregistered device '\(device)'\n" : "device '\(device)' was not registered\n"
    }

    // MARK: Health

    /// The status line, one row per price source, then push delivery's state.
    static func healthText(
        status: V1.HealthCheckResponse.ServingStatus, address: String, serverName: String, serverVersion: String,
        feeds: [V1.FeedSourceHealth] = [], push: V1.PushDeliveryState? = nil
    ) -> String {
        let server = [serverName, serverVersion].filter { !$0.isEmpty }.joined(separator: " ")
        var text = "\(status) — \(server.isEmpty ? "server" : server) at \(address)\n"
        if !feeds.isEmpty {
            text += feedsTable(feeds)
        }
        if let push { text += pushText(push) }
        return text
    }

    /// One row per price source.
    static func feedsTable(_ feeds: [V1.FeedSourceHealth]) -> String {
        var table = TextTable(
            headers: ["SOURCE", "CONNECTED", "LAST MESSAGE", "MSG/S", "RECONNECTS", "GAPS", "REJECTED", "LAST ERROR"],
            alignments: [.left, .left, .right, .decimal, .right, .right, .right, .left])
        for feed in feeds {
            table.append([
                feed.name, feed.connected ? "yes" : "no", ageText(milliseconds: feed.lastMessageAgeMs),
                DecimalDisplay.text(feed.messagesPerSecond) ?? "-", "\(feed.reconnects)", "\(feed.gaps)",
                "\(feed.rejectedMessages)", feed.lastError.isEmpty ? "-" : String(feed.lastError.prefix(60)),
            ])
        }
        return table.render()
    }

    /// `push  on, https://api.push.apple.com: 0 queued, …`, or `push  off`.
    static func pushText(_ push: V1.PushDeliveryState) -> String {
        guard push.enabled else {
            return "push    off (coinwatchd runs without an APNs key); \(push.registeredDevices) registered devices\n"
        }
        var out = "push    on, \(push.endpoint)"
        if push.paused { out += " — PAUSED: \(push.pauseReason)" }
        out += "\n        \(push.queued) queued, \(push.inFlight) in flight, \(push.delivered) delivered, "
            + "\(push.retried) retried, \(push.expired) expired, \(push.rejected) refused\n"
        out += "        \(push.registeredDevices) registered devices, \(push.disabledDevices) disabled\n"
        return out
    }

    /// `0.4 s ago`, `12 s ago`, `3 min ago`, `never`.
    static func ageText(milliseconds: Int64) -> String {
        switch milliseconds {
        case ..<0: "never"
        case ..<10_000: "\(milliseconds / 1000).\(milliseconds % 1000 / 100) s ago"
        case ..<120_000: "\(milliseconds / 1000) s ago"
        default: "\(milliseconds / 60_000) min ago"
        }
    }

    /// A cluster node's state under the health line (`coinwatch health` on a node started with --cluster).
    static func clusterText(_ cluster: V1.ClusterHealth) -> String {
        let shards = ownedShards(cluster.ownedShards)
        var text = "cluster   node \(cluster.nodeID), NATS \(cluster.natsState)"
        if !cluster.natsServer.isEmpty { text += " (\(cluster.natsServer))" }
        text += "\nmembers   \(cluster.members.joined(separator: ", "))\n"
        text += "shards    \(shards.count) of 64 owned\(shards.isEmpty ? "" : ": " + shards.map(String.init).joined(separator: " "))\n"
        text += "feed      \(cluster.runsFeed ? "runs here" : "not here")\n"
        text += "settings  revision \(cluster.settingsRevision), lag \(cluster.settingsLag)\n"
        return text
    }

    static func clusterJSON(_ cluster: V1.ClusterHealth) -> JSONObject {
        var object = JSONObject()
        object.string("node_id", cluster.nodeID)
        object.string("nats_state", cluster.natsState)
        object.string("nats_server", cluster.natsServer)
        object.strings("members", cluster.members)
        object.integers("owned_shards", ownedShards(cluster.ownedShards))
        object.bool("runs_feed", cluster.runsFeed)
        object.array("leases", cluster.leases.map { lease in
            var entry = JSONObject()
            entry.string("key", lease.key)
            entry.integer("age_ms", lease.ageMs)
            entry.integer("valid_for_ms", lease.validForMs)
            entry.integer("token", lease.token)
            return entry
        })
        object.integer("settings_revision", cluster.settingsRevision)
        object.integer("settings_lag", cluster.settingsLag)
        return object
    }

    /// The shard numbers of a `owned_shards` mask (bit n: shard n), in order.
    static func ownedShards(_ mask: UInt64) -> [Int] {
        (0..<64).filter { mask & (1 << UInt64($0)) != 0 }
    }

    static func healthJSON(
        status: V1.HealthCheckResponse.ServingStatus, address: String, serverName: String, serverVersion: String,
        feeds: [V1.FeedSourceHealth] = [], push: V1.PushDeliveryState? = nil
    ) -> JSONObject {
        var object = JSONObject()
        object.string("status", status.description)
        object.string("server", address)
        object.string("server_name", serverName)
        object.string("server_version", serverVersion)
        object.array("feeds", feeds.map { feed in
            var entry = JSONObject()
            entry.string("name", feed.name)
            entry.bool("connected", feed.connected)
            entry.integer("last_message_age_ms", feed.lastMessageAgeMs)
            entry.raw("messages_per_second", DecimalDisplay.json(feed.messagesPerSecond))
            entry.integer("messages", feed.messages)
            entry.integer("reconnects", feed.reconnects)
            entry.integer("gaps", feed.gaps)
            entry.integer("rejected_messages", feed.rejectedMessages)
            entry.string("last_error", feed.lastError)
            return entry
        })
        if let push {
            var state = JSONObject()
            state.bool("enabled", push.enabled)
            state.string("endpoint", push.endpoint)
            state.bool("paused", push.paused)
            state.string("pause_reason", push.pauseReason)
            state.integer("queued", push.queued)
            state.integer("in_flight", push.inFlight)
            state.integer("delivered", push.delivered)
            state.integer("retried", push.retried)
            state.integer("expired", push.expired)
            state.integer("rejected", push.rejected)
            state.integer("registered_devices", push.registeredDevices)
            state.integer("disabled_devices", push.disabledDevices)
            object.object("push", state)
        }
        return object
    }
}
