import CoinWatchCommandLine
import CoinWatchFeeds
import CoinWatchLogging
import CoinWatchModel
import CoinWatchPush
import CoinWatchRPC
import CoinWatchService
import CoinWatchStore
import Dispatch
import Foundation
import Synchronization

/// coinwatchd's life: open the store, start the service and the server, wait
/// for a signal, shut down gracefully.
struct Daemon {
    let options: DaemonOptions

    func run() throws -> Int32 {
        let logger = Logger(label: "coinwatchd", level: options.logLevel, format: options.logFormat)
        var configuration = serviceConfiguration
        if let apns = options.push.apns, let keyFile = options.push.keyFile {
            // The key is read before the store is opened, so a wrong path is one line and nothing else happens.
            do throws(PushError) {
                let signer = try ES256ProviderTokenSigner(keyFile: keyFile)
                configuration.push.sender = try APNsClient(configuration: apns, signer: signer, logger: logger.labeled("apns"))
            } catch {
                logger.error("cannot start APNs delivery", ["reason": error.message])
                CommandRunner.printError("coinwatchd: cannot start APNs delivery: \(error.message)")
                return 1
            }
            configuration.push.environment = apns.environment
            configuration.push.defaultTopic = apns.defaultTopic
            if apns.tokenRefresh < APNsConfiguration.recommendedTokenRefresh.lowerBound {
                logger.warning("APNs provider tokens will be replaced more often than every 20 minutes; APNs may answer "
                    + "429 TooManyProviderTokenUpdates", ["token_refresh": DurationText.format(apns.tokenRefresh)])
            }
        }
        let database: Database
        do {
            database = try Self.openStore(options.dataDirectory)
        } catch {
            // Start-up failures are said once, as one sentence for the operator (not also as a log line).
            CommandRunner.printError("coinwatchd: \(Self.explain(error, dataDirectory: options.dataDirectory))")
            return 1
        }
        let service: CoinWatchService
        do {
            let feed = options.feed
            let feedConfiguration = options.feedConfiguration
            service = try CoinWatchService(database: database, configuration: configuration, logger: logger) { hub in
                try feed.makeFeed(hub: hub, configuration: feedConfiguration, logger: logger)
            }
        } catch let error as StoreError {
            // LevelDB opens a store without reading its table files; damage there shows up while loading.
            database.close()
            CommandRunner.printError("coinwatchd: \(Self.explainLoad(error, dataDirectory: options.dataDirectory))")
            return 1
        } catch let error as FeedError {
            database.close()
            CommandRunner.printError("coinwatchd: cannot start the feed: \(error.message)")
            return 1
        } catch {
            database.close()
            configuration.push.sender?.close()
            CommandRunner.printError("coinwatchd: \(error)")
            return 1
        }
        var rpc = options.rpc
        rpc.serverName = "coinwatchd"
        rpc.serverVersion = CoinWatchVersion.current
        let server: RPCServer
        let port: Int
        do {
            server = try RPCServer(configuration: rpc, methods: service.methods, logger: logger.labeled("rpc"))
            port = try server.start()
        } catch {
            service.close()
            database.close()
            let address = "\(rpc.host):\(rpc.port)"
            CommandRunner.printError("coinwatchd: cannot listen on \(address): \(error.description(naming: address))")
            return 1
        }
        service.start()
        logger.info("listening on \(rpc.host):\(port)", [
            "data": options.dataDirectory, "feed": service.feedDescription,
            "symbols": service.feedSymbols.joined(separator: ","), "threads": "\(server.eventLoops.count)",
            "devices": "\(service.deviceCount)", "push": options.push.summary,
        ])
        let signals = SignalWatcher(logger: logger)
        signals.wait()
        logger.info("shutting down", ["grace": DurationText.format(rpc.shutdownGracePeriod)])
        let done = DispatchSemaphore(value: 0)
        Task {
            await server.shutdownGracefully()
            done.signal()
        }
        done.wait()
        service.close()
        database.close()
        let writes = service.settings.stats
        logger.info("stopped", [
            "writes": "\(writes.writesCommitted)", "rounds": "\(writes.batchesWritten)", "syncs": "\(writes.syncs)",
            "writes_per_sync": String(format: "%.1f", writes.averageRequestsPerSync),
            "sync_us": String(format: "%.0f", writes.averageSyncMicroseconds),
        ])
        return 0
    }

    var serviceConfiguration: CoinWatchService.Configuration {
        var configuration = CoinWatchService.Configuration()
        configuration.publishToken = options.publishToken
        configuration.slowSubscriberTimeout = options.rpc.slowConsumerTimeout
        configuration.alerts.outboxExpiry = options.push.alertExpiry
        return configuration
    }

    static func openStore(_ directory: String) throws(StoreError) -> Database {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(code: .ioError, message: "cannot create \(directory): \(error.localizedDescription)")
        }
        var options = Database.Options()
        options.paranoidChecks = true
        return try Database(path: directory, options: options)
    }

    /// The one-line explanation an operator needs for each way opening can fail.
    static func explain(_ error: StoreError, dataDirectory: String) -> String {
        switch error.code {
        case .alreadyInUse:
            return "the data directory \(dataDirectory) is in use by another coinwatchd (or another process holding its LOCK)"
        case .corruption:
            return "the store in \(dataDirectory) is damaged (\(error.message)); run 'coinwatchd repair --data \(dataDirectory)' "
                + "to recover what LevelDB can"
        default:
            return "cannot open the store in \(dataDirectory): \(error.message)"
        }
    }

    /// The explanation for a store that opened but could not be read: a table file that does not parse is reported
    /// as corruption, one too short to read as an I/O error ("Invalid argument"), so both point at the repair.
    static func explainLoad(_ error: StoreError, dataDirectory: String) -> String {
        guard error.code == .corruption || error.code == .ioError else {
            return "cannot load the store in \(dataDirectory): \(error.message)"
        }
        return "cannot read the store in \(dataDirectory) (\(error.message)); if its files are damaged, run "
            + "'coinwatchd repair --data \(dataDirectory)' to recover what LevelDB can"
    }

    /// `coinwatchd repair`: recovers a damaged store in place.
    static func repair(dataDirectory: String) -> Int32 {
        do throws(StoreError) {
            try Database.repair(path: dataDirectory)
            let database = try Database(path: dataDirectory)
            let entries = try database.scan().count
            database.close()
            print("repaired \(dataDirectory): \(entries) records readable")
            return 0
        } catch {
            CommandRunner.printError("coinwatchd: \(explainRepair(error, dataDirectory: dataDirectory))")
            return 1
        }
    }

    /// Why a repair failed, in words: a store in use is the common case (the server still runs).
    static func explainRepair(_ error: StoreError, dataDirectory: String) -> String {
        if error.code == .alreadyInUse {
            return "cannot repair \(dataDirectory): it is in use by a running coinwatchd (or another process holding "
                + "its LOCK); stop that first"
        }
        return "repair of \(dataDirectory) failed: \(error.message)"
    }
}

/// SIGTERM and SIGINT: the first starts a graceful shutdown, a second exits at once.
/// Kept alive for the whole run so the second signal is still caught while shutting down.
final class SignalWatcher: @unchecked Sendable {
    // @unchecked Sendable: `sources` is written once in init and never mutated; the
    // dispatch sources themselves are thread-safe.
    private let received = DispatchSemaphore(value: 0)
    private let count = SignalCount()
    private let sources: [any DispatchSourceSignal]

    init(logger: Logger) {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        let queue = DispatchQueue(label: "coinwatchd.signals")
        let received = self.received
        let count = self.count
        sources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if count.value.add(1, ordering: .relaxed).newValue == 1 {
                    received.signal()
                } else {
                    logger.warning("second signal; exiting at once")
                    _exit(1)
                }
            }
            source.resume()
            return source
        }
    }

    /// Blocks until the first signal.
    func wait() {
        received.wait()
    }
}

/// How many shutdown signals arrived.
final class SignalCount: Sendable {
    let value = Atomic<Int>(0)
}
