import CoinWatchClient
import CoinWatchCommandLine
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// `settings get | set | delete`.
enum SettingsCommand {
    static func get(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        let device = try usage(CommandCatalog.settingsGet) { () throws(UsageError) in
            try ArgumentReaders.device(ArgumentReaders.exactly(["DEVICE"], in: parsed)[0])
        }
        let session = context.session
        let settings = try context.run { () throws(CLIError) in
            try await session.call { client throws(RPCError) in try await client.settings(device: device) }
        }
        context.emit(Presenter.settingsText(settings), json: Presenter.settingsJSON(settings))
        return ExitStatus.ok
    }

    /// What `settings set` was asked to do to one symbol's rule.
    struct RuleChange: Sendable, Hashable {
        var device: String
        var symbol: String
        /// New thresholds; nil keeps the stored one, zero turns that side off.
        var below: ExactDecimal?
        var above: ExactDecimal?
        var remove: Bool
        var expectedVersion: UInt64?

        init(_ parsed: ParsedArguments) throws(UsageError) {
            let positionals = try ArgumentReaders.exactly(["DEVICE", "SYMBOL"], in: parsed)
            device = try ArgumentReaders.device(positionals[0])
            symbol = try ArgumentReaders.symbol(positionals[1])
            below = try parsed["below"].map { text throws(UsageError) in try ArgumentReaders.price(text, "--below") }
            above = try parsed["above"].map { text throws(UsageError) in try ArgumentReaders.price(text, "--above") }
            remove = parsed.has("off")
            expectedVersion = try ArgumentReaders.expectedVersion(parsed)
            if remove && (below != nil || above != nil) {
                throw UsageError("--off removes the rule; it cannot be combined with --below or --above")
            }
            if !remove && below == nil && above == nil {
                throw UsageError("nothing to set: give --below PRICE, --above PRICE, or --off")
            }
        }

        /// The rule to store given the current one: thresholds not given keep their value; zero is off.
        func merged(with current: V1.AlertRule?) -> (below: ExactDecimal?, above: ExactDecimal?) {
            let below = self.below ?? DecimalDisplay.threshold(current?.below)
            let above = self.above ?? DecimalDisplay.threshold(current?.above)
            return (below.flatMap { $0.isZero ? nil : $0 }, above.flatMap { $0.isZero ? nil : $0 })
        }
    }

    /// How often a read-merge-write is retried when another writer got in between.
    static let maxAttempts = 5

    static func set(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        let change = try usage(CommandCatalog.settingsSet) { () throws(UsageError) in try RuleChange(parsed) }
        let session = context.session
        let (settings, warnings) = try context.run { () throws(CLIError) in
            try await session.call { client throws(RPCError) in try await apply(change, client: client) }
        }
        context.emit(Presenter.settingsText(settings), json: Presenter.settingsJSON(settings))
        for warning in warnings { context.err.line("warning: \(warning)") }
        return ExitStatus.ok
    }

    /// Applies a rule change. Keeping a threshold that was not given needs the current rule, so the
    /// change is a read-merge-write guarded by the version that was read: a concurrent save makes it
    /// fail with ABORTED and it is redone on fresh data. With `--expect-version` the user's version
    /// guards it instead, and ABORTED is reported, not retried.
    static func apply(
        _ change: RuleChange, client: CoinWatchClient
    ) async throws(RPCError) -> (settings: V1.Settings, warnings: [String]) {
        if change.remove {
            return (try await client.removeRule(
                device: change.device, symbol: change.symbol, expectedVersion: change.expectedVersion), [])
        }
        var attempt = 1
        while true {
            var current: V1.Settings?
            do {
                current = try await client.settings(device: change.device)
            } catch where error.code == .notFound {
                current = nil
            }
            let (below, above) = change.merged(with: current?.rules[change.symbol])
            let expected = change.expectedVersion ?? current?.version ?? 0
            do {
                if below == nil && above == nil {
                    // Both sides off: a rule that can never fire is no rule at all.
                    return (try await client.removeRule(
                        device: change.device, symbol: change.symbol, expectedVersion: expected), [])
                }
                // The whole response: it carries the save's warnings (a symbol the server has never priced).
                let response = try await client.call(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(
                    device: change.device, symbol: change.symbol, below: below, above: above, expectedVersion: expected))
                return (response.settings ?? V1.Settings(), response.warnings)
            } catch where error.code == .aborted && change.expectedVersion == nil && attempt < maxAttempts {
                attempt += 1
            }
        }
    }

    static func delete(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        let (device, expected) = try usage(CommandCatalog.settingsDelete) { () throws(UsageError) in
            (try ArgumentReaders.device(ArgumentReaders.exactly(["DEVICE"], in: parsed)[0]),
             try ArgumentReaders.expectedVersion(parsed))
        }
        let session = context.session
        let existed = try context.run { () throws(CLIError) in
            try await session.call { client throws(RPCError) in
                try await client.deleteSettings(device: device, expectedVersion: expected)
            }
        }
        context.emit(
            Presenter.deletedText(device: device, existed: existed),
            json: Presenter.deletedJSON(device: device, existed: existed))
        return ExitStatus.ok
    }
}

/// Runs argument checks, turning their usage errors into errors carrying the command's usage.
func usage<T>(_ command: CommandSpec, _ body: () throws(UsageError) -> T) throws(CLIError) -> T {
    do {
        return try body()
    } catch {
        throw CLIError.usage(error.message, of: command)
    }
}
