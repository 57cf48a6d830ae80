import CoinWatchClient
import CoinWatchCommandLine
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// `prices [SYMBOL...]` and `publish SYMBOL PRICE [SYMBOL PRICE...]`.
enum PricesCommand {
    static func prices(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        let symbols = try usage(CommandCatalog.prices) { () throws(UsageError) in
            try parsed.positionals.map { text throws(UsageError) in try ArgumentReaders.symbol(text) }
        }
        let session = context.session
        let ticks = try context.run { () throws(CLIError) in
            try await session.call { client throws(RPCError) in try await client.prices(symbols: symbols) }
        }
        context.emit(Presenter.pricesText(ticks), json: Presenter.pricesJSON(ticks))
        let missing = symbols.filter { symbol in !ticks.contains { $0.symbol == symbol } }
        if !missing.isEmpty && !context.options.json {
            context.err.line("note: no price yet for \(missing.joined(separator: ", "))")
        }
        return ExitStatus.ok
    }

    static func publish(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        let ticks = try usage(CommandCatalog.publish) { () throws(UsageError) in try readTicks(parsed.positionals) }
        let session = context.session
        let accepted = try context.run { () throws(CLIError) in
            try await session.call { client throws(RPCError) in try await client.publish(ticks) }
        }
        context.emit(Presenter.publishedText(accepted: accepted), json: Presenter.publishedJSON(accepted: accepted))
        return ExitStatus.ok
    }

    /// SYMBOL PRICE pairs as ticks stamped by the server (time 0).
    static func readTicks(_ words: [String]) throws(UsageError) -> [V1.Tick] {
        guard !words.isEmpty else { throw UsageError("missing SYMBOL PRICE") }
        guard words.count % 2 == 0 else { throw UsageError("missing PRICE after '\(words.last!)'") }
        var ticks = [V1.Tick]()
        for index in stride(from: 0, to: words.count, by: 2) {
            let symbol = try ArgumentReaders.symbol(words[index])
            let price = try ArgumentReaders.price(words[index + 1], "PRICE of \(symbol)")
            ticks.append(V1.Tick(symbol: symbol, price: V1.Decimal(price), timeMs: 0))
        }
        return ticks
    }
}

/// `health`.
enum HealthCommand {
    static func run(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        try usage(CommandCatalog.health) { () throws(UsageError) in _ = try ArgumentReaders.exactly([], in: parsed) }
        let session = context.session
        let (response, name, version) = try context.run { () throws(CLIError) in
            let connection = try await session.connect()
            do throws(RPCError) {
                let response = try await session.client.healthCheck()
                return (response, connection.welcome.serverName, connection.welcome.serverVersion)
            } catch {
                throw CLIError(error)
            }
        }
        let status = response.status
        var text = Presenter.healthText(
            status: status, address: session.address, serverName: name, serverVersion: version, feeds: response.feeds,
            push: response.push)
        var json = Presenter.healthJSON(
            status: status, address: session.address, serverName: name, serverVersion: version, feeds: response.feeds,
            push: response.push)
        if let cluster = response.cluster {
            text += Presenter.clusterText(cluster)
            json.object("cluster", Presenter.clusterJSON(cluster))
        }
        context.emit(text, json: json)
        return status == .serving ? ExitStatus.ok : ExitStatus.rpcError
    }
}
