import CoinWatchAuth
import CoinWatchCluster
import CoinWatchCommandLine
import CoinWatchConnect
import CoinWatchFeeds
import CoinWatchHTTP
import CoinWatchLogging
import CoinWatchMetrics
import CoinWatchModel
import CoinWatchPush
import CoinWatchRPC
import CoinWatchService
import CoinWatchStore
import CoinWatchTLS
import Dispatch
import Foundation
import Synchronization

/// coinwatchd's life: open the store, start the service and the server, wait
/// for a signal, shut down gracefully.
struct Daemon {
    let options: DaemonOptions

    func run() throws -> Int32 {
        let logger = Logger(label: "coinwatchd", level: options.logLevel, format: options.logFormat)
        let authMode: AuthMode
        do {
            authMode = try AuthMode.resolve(
                requested: options.security.requestedMode, listenHosts: options.listen.addresses.map(\.host))
        } catch {
            CommandRunner.printError("coinwatchd: \(error)")
            return 1
        }
        // Read before the store is opened, so a wrong path or a key that does not match is reported at once.
        var tls: ReloadableTLSContext?
        if let configuration = options.listen.tls {
            do {
                tls = try ReloadableTLSContext(configuration)
            } catch {
                CommandRunner.printError("coinwatchd: cannot use the TLS certificate and key: \(error)")
                return 1
            }
        }
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
        let store: OpenedStore
        do {
            store = try Self.openStore(options.dataDirectory)
        } catch {
            // Start-up failures are said once, as one sentence for the operator (not also as a log line).
            CommandRunner.printError("coinwatchd: \(Self.explain(error, dataDirectory: options.dataDirectory))")
            return 1
        }
        let credentials: CredentialStore
        do {
            credentials = try CredentialStore(
                database: store.database, journal: store.journal, publishToken: options.publishToken)
        } catch {
            store.close()
            logger.error("cannot load the credentials", ["data": options.dataDirectory, "reason": error.message])
            // The credentials are the first records read from the store, so a damaged table shows up here first.
            CommandRunner.printError("coinwatchd: cannot read the credentials in \(options.dataDirectory) (\(error.message)); "
                + "if its files are damaged, run 'coinwatchd repair --data \(options.dataDirectory)' to recover what "
                + "LevelDB can")
            return 1
        }
        configuration.deviceClaims = DeviceClaims(credentials: credentials, mode: authMode, logger: logger.labeled("auth"))
        var authorization = options.security.authorizer
        authorization.mode = authMode
        let authorizer = Authorizer(configuration: authorization, credentials: credentials, logger: logger.labeled("auth"))
        var cluster: ClusterNode?
        if let clusterConfiguration = options.cluster {
            do {
                cluster = try ClusterNode(configuration: clusterConfiguration, logger: logger.labeled("cluster"))
            } catch {
                store.close()
                CommandRunner.printError("coinwatchd: cannot join the cluster: \(error.message)")
                return 1
            }
        }
        let service: CoinWatchService
        do {
            let feed = options.feed
            let feedConfiguration = options.feedConfiguration
            service = try CoinWatchService(
                database: store.database, journal: store.journal, configuration: configuration, logger: logger
            ) { hub in
                try feed.makeFeed(hub: hub, configuration: feedConfiguration, logger: logger)
            }
        } catch let error as StoreError {
            // LevelDB opens a store without reading its table files; damage there shows up while loading.
            store.close()
            CommandRunner.printError("coinwatchd: \(Self.explainLoad(error, dataDirectory: options.dataDirectory))")
            return 1
        } catch let error as FeedError {
            store.close()
            CommandRunner.printError("coinwatchd: cannot start the feed: \(error.message)")
            return 1
        } catch {
            store.close()
            configuration.push.sender?.close()
            CommandRunner.printError("coinwatchd: \(error)")
            return 1
        }
        if let cluster {
            do {
                try attach(cluster, to: service, credentials: credentials, logger: logger)
            } catch {
                cluster.close()
                service.close()
                store.close()
                CommandRunner.printError("coinwatchd: cannot join the cluster: \(error.message)")
                return 1
            }
        }
        var rpc = options.rpc
        options.listen.apply(to: &rpc, context: tls)
        rpc.serverName = "coinwatchd"
        rpc.serverVersion = CoinWatchVersion.current
        rpc.admission = authorizer.connections
        let methods = authorizer.guardingStreams(
            Self.methods(of: service, adding: AdminMethods(credentials: credentials).methods))
        // Signals are watched before the port opens: a SIGTERM sent as soon as "listening on" is logged (or while
        // the server starts) gets a graceful shutdown, not the default action's abrupt end in the moment between.
        let reloadable = tls
        let signals = SignalWatcher(logger: logger) {
            guard let tls = reloadable else {
                logger.info("SIGHUP: no TLS certificate to reload")
                return
            }
            do throws(TLSError) {
                try tls.reload()
                logger.notice("reloaded the TLS certificate and key for new connections", [
                    "cert": tls.configuration.certificateChainFile ?? "",
                ])
            } catch {
                logger.error("kept the previous TLS certificate: the new one cannot be used", ["reason": error.description])
            }
        }
        let server: RPCServer
        do {
            server = try RPCServer(configuration: rpc, methods: methods, authorizer: authorizer, logger: logger.labeled("rpc"))
            Self.serveHTTP(on: server, service: service, cluster: cluster, authorizer: authorizer, corsOrigins: options.corsOrigins,
                           logger: logger)
            try server.start()
        } catch {
            cluster?.close()
            service.close()
            store.close()
            let address = options.listen.addresses.map(\.hostAndPort).joined(separator: ", ")
            CommandRunner.printError("coinwatchd: cannot listen on \(address): \(error.description(naming: address))")
            return 1
        }
        service.start()
        cluster?.start()
        // One line per listener, the first (with the server's settings) naming the first --listen address. At
        // notice, so `--log-level notice` keeps them: they are how an operator, scripts/serve --background and the
        // test harnesses learn the ports.
        for (index, listener) in rpc.listeners.enumerated() {
            let address = "\(listener.host.contains(":") ? "[\(listener.host)]" : listener.host):\(server.ports[index])"
            let security = listener.tls == nil ? "off" : "only"
            if index == 0 {
                logger.notice("listening on \(address)", [
                    "data": options.dataDirectory, "feed": service.feedDescription,
                    "symbols": service.feedSymbols.joined(separator: ","), "threads": "\(server.eventLoops.count)",
                    "devices": "\(service.deviceCount)", "auth": authMode.rawValue, "tls": security,
                    "push": options.push.summary,
                ])
            } else {
                logger.notice("listening on \(address)", ["tls": security])
            }
        }
        signals.wait()
        logger.info("shutting down", ["grace": DurationText.format(rpc.shutdownGracePeriod)])
        let done = DispatchSemaphore(value: 0)
        Task {
            await server.shutdownGracefully()
            done.signal()
        }
        done.wait()
        cluster?.close()
        service.close()
        // The last rounds may have queued secrets to take back (answers the shutdown kept from being sent).
        configuration.deviceClaims?.finishTakeBacks()
        store.close()
        let writes = service.settings.stats
        logger.info("stopped", [
            "writes": "\(writes.writesCommitted)", "rounds": "\(writes.batchesWritten)", "syncs": "\(writes.syncs)",
            "writes_per_sync": String(format: "%.1f", writes.averageRequestsPerSync),
            "sync_us": String(format: "%.0f", writes.averageSyncMicroseconds),
        ])
        return 0
    }

    /// The service's methods and `extra` ones, and gRPC's standard health and reflection services describing them.
    static func methods(of service: CoinWatchService, adding extra: [RPCMethod] = []) -> [RPCMethod] {
        let methods = service.methods + extra
        var names: [String] = []
        for method in methods {
            let name = String(method.path.prefix { $0 != "/" })
            if !names.contains(name) { names.append(name) }
        }
        let health = service.health
        return methods + GRPCHealthService(services: names, isServing: { health.isServing }).methods
            + GRPCReflectionService(services: names + ["grpc.health.v1.Health"]).methods
    }

    /// HTTP on the same port: gRPC over HTTP/2, the Connect protocol and the dashboard over HTTP/1.1 and
    /// HTTP/2, and the operators' `/metrics`, `/healthz` and `/readyz`. Components add their collectors to the
    /// registry here.
    static func serveHTTP(on server: RPCServer, service: CoinWatchService, cluster: ClusterNode?, authorizer: Authorizer,
                          corsOrigins: [String], logger: Logger) {
        let registry = MetricsRegistry()
        registry.register(server.metrics)
        registry.register(service.metrics)
        registry.register(authorizer.metrics)
        registry.register(service.push.metricsCollector)
        let health = service.health
        registry.register(FeedMetrics { [health] in health.feedSourceStats })
        if let cluster { registry.register(cluster.metricsCollector) }
        registry.register(ProcessMetrics())
        var configuration = HTTPServer.Configuration(metrics: registry, isServing: { health.isServing })
        configuration.cors = CORSPolicy(allowedOrigins: corsOrigins)
        _ = HTTPServer(rpc: server, configuration: configuration, logger: logger.labeled("http"))
    }

    var serviceConfiguration: CoinWatchService.Configuration {
        var configuration = CoinWatchService.Configuration()
        configuration.slowSubscriberTimeout = options.rpc.slowConsumerTimeout
        // In a cluster the feed runs on the node holding its lease, started by the cluster node.
        configuration.startsFeed = options.cluster == nil
        configuration.alerts.outboxExpiry = options.push.alertExpiry
        configuration.alerts.hysteresis = options.push.alertHysteresis
        return configuration
    }

    /// Puts the opened service on the cluster: the price bus, and the feed behind its lease.
    func attach(
        _ cluster: ClusterNode, to service: CoinWatchService, credentials: CredentialStore, logger: Logger
    ) throws(ClusterError) {
        let spec = options.feed
        let feedConfiguration = options.feedConfiguration
        let hub = service.hub
        let feedName = spec.sources.isEmpty ? "" : spec.description
        try cluster.attach(service, credentials: credentials, feedName: feedName) {
            try spec.makeFeed(hub: hub, configuration: feedConfiguration, logger: logger)
        }
    }

    static func openStore(_ directory: String) throws(StoreError) -> OpenedStore {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(code: .ioError, message: "cannot create \(directory): \(error.localizedDescription)")
        }
        var options = Database.Options()
        options.paranoidChecks = true
        return try OpenedStore(Database(path: directory, options: options))
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

/// SIGTERM and SIGINT: the first starts a graceful shutdown, a second exits at once. SIGHUP: `reload` (the TLS
/// certificate), any number of times. Kept alive for the whole run so the second signal is still caught while
/// shutting down.
final class SignalWatcher: @unchecked Sendable {
    // @unchecked Sendable: `sources` is written once in init and never mutated; the
    // dispatch sources themselves are thread-safe.
    private let received = DispatchSemaphore(value: 0)
    private let count = SignalCount()
    private let sources: [any DispatchSourceSignal]

    init(logger: Logger, reload: @escaping @Sendable () -> Void) {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        // Ignored by default action (which ends the process) so only the dispatch source below sees it.
        signal(SIGHUP, SIG_IGN)
        let queue = DispatchQueue(label: "coinwatchd.signals")
        let received = self.received
        let count = self.count
        let shutdownSources = [SIGTERM, SIGINT].map { number in
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
        // Its own queue: a reload reads files, and must not hold up a shutdown signal.
        let hangUp = DispatchSource.makeSignalSource(signal: SIGHUP, queue: DispatchQueue(label: "coinwatchd.reload"))
        hangUp.setEventHandler(handler: reload)
        hangUp.resume()
        sources = shutdownSources + [hangUp]
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
