import CoinWatchClient
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

/// coinwatchd nodes in cluster mode (`--cluster`) on a nats-server the test starts: one price bus, replicated
/// settings, each alert fired by one node. Longer runs (kills under load) are in scripts/cluster-soak.
@Suite(
    .enabled(if: NATSCluster.isAvailable, "nats-server is not installed (scripts/bootstrap installs it)"),
    .serialized)
struct ClusterDaemonTests {
    /// A node in cluster mode. Tests end their nodes with `crash()` (SIGKILL): a graceful stop waits for open
    /// streams up to the grace period, and it would wait on a thread of the pool every test shares.
    static func startNode(_ nats: NATSCluster, _ name: String) async throws -> ServerProcess {
        try await ServerProcess.start(arguments: ["--cluster", nats.urls, "--node-id", name, "--lease-ttl", "2s"])
    }

    static func client(_ server: ServerProcess) -> CoinWatchClient {
        CoinWatchClient.ofDaemon(port: server.port)
    }

    /// One NATS server and a coinwatchd node per name, joined to it, each with a client; `stop()` ends them all.
    final class Cluster {
        let nats: NATSCluster
        let nodes: [ServerProcess]
        let clients: [CoinWatchClient]

        init(nats: NATSCluster, nodes: [ServerProcess]) {
            self.nats = nats
            self.nodes = nodes
            clients = nodes.map(ClusterDaemonTests.client)
        }

        func stop() {
            clients.forEach { $0.close() }
            nodes.forEach { $0.crash() }
        }
    }

    static func startCluster(_ names: String...) async throws -> Cluster {
        let nats = try await NATSCluster.start(servers: 1)
        var nodes: [ServerProcess] = []
        do {
            for name in names { nodes.append(try await startNode(nats, name)) }
        } catch {
            nodes.forEach { $0.crash() }
            throw error
        }
        return Cluster(nats: nats, nodes: nodes)
    }

    static func tick(_ symbol: String, _ price: Int64) -> V1.Tick {
        var tick = V1.Tick()
        tick.symbol = symbol
        tick.price = V1.Decimal(ExactDecimal(price))
        return tick
    }

    /// What one StreamPrices call received: (sequence, price) in arrival order.
    final class Updates: Sendable {
        let received = Mutex<[(sequence: UInt64, price: String)]>([])
        var prices: [String] { received.withLock { $0.map(\.price) } }
        var sequences: [UInt64] { received.withLock { $0.map(\.sequence) } }
    }

    static func follow(_ client: CoinWatchClient, _ symbol: String) -> (Updates, Task<Void, Never>) {
        let updates = Updates()
        let task = Task {
            do {
                for try await update in client.streamPrices(symbols: [symbol]) {
                    let price = update.price.flatMap { ExactDecimal(mantissa: $0.mantissa, scale: Int($0.scale)) }
                    updates.received.withLock { $0.append((update.sequence, price.map { "\($0)" } ?? "?")) }
                }
            } catch {}
        }
        return (updates, task)
    }

    @Test func aTickPublishedOnOneNodeReachesStreamsOnTheOthers() async throws {
        let cluster = try await Self.startCluster("a", "b", "c")
        defer { cluster.stop() }
        let (nats, clients) = (cluster.nats, cluster.clients)
        let streams = clients[1...].map { Self.follow($0, "CWX") }
        defer { streams.forEach { $0.1.cancel() } }
        _ = try await clients[0].publish([Self.tick("CWX", 1)])
        let first = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { streams.allSatisfy { $0.0.prices.contains("1") } }
        #expect(first)
        for price in Int64(2)...100 {
            _ = try await clients[0].publish([Self.tick("CWX", price)])
        }
        let last = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { streams.allSatisfy { $0.0.prices.last == "100" } }
        #expect(last)
        for (updates, _) in streams {
            let prices = updates.prices.compactMap { Int($0) }
            // Each price once, in publish order (a stream may skip prices it was too slow for, never repeat one).
            #expect(prices == prices.sorted() && Set(prices).count == prices.count, "\(prices)")
            #expect(updates.sequences == Array(1...UInt64(updates.sequences.count)))
        }
        // A node started now serves the last price at once.
        let d = try await Self.startNode(nats, "d")
        defer { d.crash() }
        let late = Self.client(d)
        defer { late.close() }
        let snapshot = try await late.prices(symbols: ["CWX"])
        #expect(snapshot.first?.price == V1.Decimal(ExactDecimal(Int64(100))))
    }

    @Test func settingsSavedOnOneNodeAreReadOnAnotherAndRacesHaveOneWinner() async throws {
        let cluster = try await Self.startCluster("a", "b")
        defer { cluster.stop() }
        let clients = cluster.clients
        let saved = try await clients[0].setRule(device: "phone-1", symbol: "BTC", below: ExactDecimal(Int64(10)), above: nil)
        #expect(saved.version == 1)
        let readable = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { (try? await clients[1].settings(device: "phone-1").version) == 1 }
        #expect(readable)
        for version in UInt64(1)...5 {
            let known = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { (try? await clients[1].settings(device: "phone-1").version) == version }
            #expect(known)
            async let left = Self.outcome(clients[0], "BTC", expecting: version)
            async let right = Self.outcome(clients[1], "ETH", expecting: version)
            let outcomes = await [left, right]
            #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")
            #expect(outcomes.filter { $0 == .aborted }.count == 1, "\(outcomes)")
        }
    }

    @Test func credentialsHoldAcrossNodes() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let auth = ["--auth", "required"]
        // An admin key made on node a's store before it first joins is offered to the cluster.
        let data = try TemporaryDirectory(prefix: "cluster-auth")
        let created = try await ServerProcess.run(["keys", "create", "--scope", "admin", "--data", data.path + "/db"])
        let admin = try #require(created.output.split(separator: "\n").first { $0.hasPrefix("cwk_") }.map(String.init))
        let a = try await ServerProcess.start(
            dataDirectory: data, arguments: ["--cluster", nats.urls, "--node-id", "a", "--lease-ttl", "2s"] + auth)
        defer { a.crash() }
        let b = try await ServerProcess.start(arguments: ["--cluster", nats.urls, "--node-id", "b", "--lease-ttl", "2s"] + auth)
        defer { b.crash() }
        let group = try EventLoopGroup(threads: 1, namePrefix: "cluster-auth")
        defer { group.syncShutdownGracefully() }
        let onA = try await RPCClientConnection.connect(host: "127.0.0.1", port: a.port, on: group.next())
        defer { onA.close() }
        let claimed = try await onA.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(
            deviceID: "phone-1", setRules: ["BTC": V1.AlertRule(below: V1.Decimal(mantissa: 10, scale: 0))]))
        #expect(claimed.deviceSecret.hasPrefix("cwd_"))
        let onB = try await RPCClientConnection.connect(host: "127.0.0.1", port: b.port, on: group.next())
        defer { onB.close() }
        /// How GetSettings of phone-1 with the device's secret ends on `node`: nil when it answers.
        func phoneCall(on node: ServerProcess) async -> RPCError.Code? {
            var options = RPCClientConnection.Options()
            options.authToken = claimed.deviceSecret
            do {
                let phone = try await RPCClientConnection.connect(
                    host: "127.0.0.1", port: node.port, on: group.next(), options: options)
                defer { phone.close() }
                _ = try await phone.unary(V1.CoinWatch.getSettings, V1.GetSettingsRequest(deviceID: "phone-1"))
                return nil
            } catch {
                return error.code
            }
        }
        // Once node b has the settings, it has the claim that came with them.
        let replicated = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            await phoneCall(on: b) == nil
        }
        #expect(replicated, "the secret issued on node a does not work on node b")
        let error = await #expect(throws: RPCError.self, "an anonymous caller claimed a claimed device on node b") {
            try await onB.unary(V1.CoinWatch.saveSettings, V1.SaveSettingsRequest(
                deviceID: "phone-1", setRules: ["BTC": V1.AlertRule(below: V1.Decimal(mantissa: 1, scale: 0))]))
        }
        #expect(error?.code == .unauthenticated)

        // Node a's admin key works on node b, and a reset there ends the secret on node a.
        var adminOptions = RPCClientConnection.Options()
        adminOptions.authToken = admin
        let adminOnB = try await RPCClientConnection.connect(
            host: "127.0.0.1", port: b.port, on: group.next(), options: adminOptions)
        defer { adminOnB.close() }
        let reset = try await adminOnB.unary(V1.Admin.resetDevice, V1.ResetDeviceRequest(deviceID: "phone-1"))
        #expect(reset.hadSecret)
        let refusedOnA = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            await phoneCall(on: a) == .unauthenticated
        }
        #expect(refusedOnA, "a device reset on node b kept its secret on node a")
    }

    @Test func aRegistrationTakenOnOneNodeIsKnownOnTheOthers() async throws {
        let cluster = try await Self.startCluster("a", "b")
        defer { cluster.stop() }
        let (nats, clients) = (cluster.nats, cluster.clients)
        let token = String(repeating: "5a", count: 32)
        _ = try await clients[0].registerDevice(device: "phone-1", apnsToken: token)
        // Node b, which may own the device's shard and so send its pushes, has the token.
        let known = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            (try? await clients[1].device("phone-1"))?.apnsToken == token
        }
        #expect(known, "node b does not know a registration taken on node a")
        #expect(try await clients[1].unregisterDevice(device: "phone-1"))
        let gone = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            do {
                _ = try await clients[0].device("phone-1")
                return false
            } catch {
                return (error as? RPCError)?.code == .notFound
            }
        }
        #expect(gone, "node a still has a registration removed on node b")
        // A node that starts later reads every registration.
        _ = try await clients[1].registerDevice(device: "phone-2", apnsToken: token)
        let c = try await Self.startNode(nats, "c")
        defer { c.crash() }
        let late = Self.client(c)
        defer { late.close() }
        #expect(try await late.device("phone-2").apnsToken == token)
    }

    static func outcome(_ client: CoinWatchClient, _ symbol: String, expecting version: UInt64) async -> RPCError.Code? {
        do {
            _ = try await client.saveSettings(V1.SaveSettingsRequest(
                device: "phone-1", symbol: symbol, below: ExactDecimal(Int64(version)), above: nil, expectedVersion: version))
            return nil
        } catch {
            return error.code
        }
    }

    final class AlertCounts: Sendable {
        let value = Mutex<[String: Int]>([:])
    }

    /// A StreamAlerts call per device on each of `clients`, counting the alerts each call receives, by
    /// "`client index`/`device`".
    static func followAlerts(_ clients: [CoinWatchClient], _ devices: [String]) -> (AlertCounts, [Task<Void, Never>]) {
        let counts = AlertCounts()
        var tasks: [Task<Void, Never>] = []
        for (index, client) in clients.enumerated() {
            for device in devices {
                tasks.append(Task {
                    do {
                        for try await _ in client.streamAlerts(device: device) {
                            counts.value.withLock { $0["\(index)/\(device)", default: 0] += 1 }
                        }
                    } catch {}
                })
            }
        }
        return (counts, tasks)
    }

    /// Every node of `nodes` has `count` StreamAlerts calls open (its metrics say so).
    static func alertCallsOpen(_ nodes: [ServerProcess], _ count: Int) async -> Bool {
        await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            await Self.metrics(nodes).allSatisfy { $0["coinwatch_alert_streams"] == Double(count) }
        }
    }

    /// Every call of every device on `nodes` clients has received at least `least` alerts.
    static func everyCall(_ counts: AlertCounts, nodes: Int, _ devices: [String], atLeast least: Int) -> Bool {
        counts.value.withLock { counts in
            (0..<nodes).allSatisfy { index in devices.allSatisfy { counts["\(index)/\($0)", default: 0] >= least } }
        }
    }

    /// What a node last said of its alert shards: "alert shards owned count=N assigned=M members=K".
    static func shards(_ server: ServerProcess) -> (owned: Int, assigned: Int, members: Int) {
        guard let line = server.log.split(separator: "\n").last(where: { $0.contains("alert shards owned") }) else {
            return (0, -1, 0)
        }
        func number(_ name: String) -> Int {
            guard let range = line.range(of: name + "=") else { return -1 }
            return Int(line[range.upperBound...].prefix { $0.isNumber }) ?? -1
        }
        return (number("count"), number("assigned"), number("members"))
    }

    /// Every node sees all `count` members and holds exactly the shards assigned to it: every shard has one owner
    /// and none is about to move.
    static func shardsSettled(_ nodes: [ServerProcess]) -> Bool {
        let states = nodes.map(shards)
        return states.allSatisfy { $0.members == nodes.count && $0.owned == $0.assigned }
            && states.map(\.owned).reduce(0, +) == 64
    }

    /// Three nodes a, b and c with every shard owned and none about to move, `devices` with a rule above 100 on
    /// `symbol` (saved across the nodes), and `symbol` at 50 on every node: one tick above 100 away from a crossing.
    static func armedCluster(_ nats: NATSCluster, _ devices: [String], _ symbol: String) async throws
        -> (nodes: [ServerProcess], clients: [CoinWatchClient])
    {
        var nodes: [ServerProcess] = []
        for name in ["a", "b", "c"] { nodes.append(try await Self.startNode(nats, name)) }
        let clients = nodes.map(Self.client)
        let settled = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) { Self.shardsSettled(nodes) }
        #expect(settled, "\(nodes.map(Self.shards))")
        for (index, device) in devices.enumerated() {
            _ = try await clients[index % 3].setRule(device: device, symbol: symbol, below: nil, above: ExactDecimal(Int64(100)))
        }
        _ = try await clients[0].publish([Self.tick(symbol, 50)])
        let ready = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            for client in clients {
                guard (try? await client.prices(symbols: [symbol]).first?.price) == V1.Decimal(ExactDecimal(Int64(50)))
                else { return false }
                for device in devices where (try? await client.settings(device: device).version) != 1 { return false }
            }
            return true
        }
        #expect(ready)
        return (nodes, clients)
    }

    /// `GET /metrics` of `server`: each sample's value by its series as written (`name{labels}`).
    static func metrics(_ server: ServerProcess) async -> [String: Double] {
        var text: String?
        if let client = try? RawClient(port: server.port) {
            client.send("GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            text = String(decoding: await client.readToEnd(), as: UTF8.self)
            client.close()
        }
        var values: [String: Double] = [:]
        for line in (text ?? "").split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = value
        }
        return values
    }

    /// Each of `nodes`' metrics, in order.
    static func metrics(_ nodes: [ServerProcess]) async -> [[String: Double]] {
        var all: [[String: Double]] = []
        for node in nodes { all.append(await metrics(node)) }
        return all
    }

    /// The sum of `series` over `nodes`.
    static func total(_ series: String, _ nodes: [ServerProcess]) async -> Double {
        await metrics(nodes).reduce(0) { $0 + ($1[series] ?? 0) }
    }

    @Test func eachCrossingFiresOnceAcrossTheCluster() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let devices = (0..<12).map { "watch-\($0)" }
        let (nodes, clients) = try await Self.armedCluster(nats, devices, "CWA")
        defer { nodes.forEach { $0.crash() } }
        defer { clients.forEach { $0.close() } }
        // Health says the shards are split as the logs do: each node names itself and every member, no overlap.
        var union: UInt64 = 0
        var overlap: UInt64 = 0
        for (client, name) in zip(clients, ["a", "b", "c"]) {
            let cluster = try #require(try await client.healthCheck().cluster)
            #expect(cluster.nodeID == name)
            #expect(cluster.natsState == "connected")
            #expect(cluster.members == ["a", "b", "c"])
            #expect(cluster.leases.filter { $0.key.hasPrefix("shard.") }.count == cluster.ownedShards.nonzeroBitCount)
            overlap |= union & cluster.ownedShards
            union |= cluster.ownedShards
        }
        #expect(union == UInt64.max && overlap == 0)
        // Every device's alerts, on every node: the owner's calls from its own firing, the others' relayed. A relayed
        // alert reaches the calls open when it arrives (it is not kept pending off its owner): wait for all of them.
        let (counts, tasks) = Self.followAlerts(clients, devices)
        defer { tasks.forEach { $0.cancel() } }
        #expect(await Self.alertCallsOpen(nodes, devices.count))
        _ = try await clients[1].publish([Self.tick("CWA", 150)])
        let fired = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            Self.everyCall(counts, nodes: 3, devices, atLeast: 1)
        }
        #expect(fired, "\(counts.value.withLock { $0 })")
        // A duplicate would come from another node evaluating the same tick at about the same time, or a relayed
        // alert delivered beside the node's own: watch a while.
        let duplicated = await eventually(timeout: .seconds(3), interval: .milliseconds(50)) {
            counts.value.withLock { $0.values.contains { $0 > 1 } }
        }
        #expect(!duplicated, "\(counts.value.withLock { $0 })")
        // Metrics say the same: each node's id and live connection, the shards split between them, and each
        // crossing fired by its owner and held back by the two others.
        for (node, name) in zip(nodes, ["a", "b", "c"]) {
            let values = await Self.metrics(node)
            #expect(values["coinwatch_cluster_node_info{node_id=\"\(name)\"}"] == 1)
            #expect(values["coinwatch_cluster_nats_state{state=\"connected\"}"] == 1)
            #expect(values["coinwatch_cluster_members"] == 3)
        }
        let counted = await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
            let all = await Self.metrics(nodes)
            func sum(_ series: String) -> Double { all.reduce(0) { $0 + ($1[series] ?? 0) } }
            return sum("coinwatch_cluster_owned_shards") == 64 && sum("coinwatch_alerts_fired_total") == Double(devices.count)
                && sum("coinwatch_alerts_held_back_total") == Double(2 * devices.count)
        }
        let seen = await Self.metrics(nodes).map { $0.filter { $0.key.contains("shards") || $0.key.contains("alerts_") } }
        #expect(counted, "\(seen)")
    }

    @Test func anAlertDeliveredOnAnotherNodeLeavesItsOwnersOutbox() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let devices = (0..<12).map { "elsewhere-\($0)" }
        let (nodes, clients) = try await Self.armedCluster(nats, devices, "CWE")
        defer { nodes.forEach { $0.crash() } }
        defer { clients.forEach { $0.close() } }
        // The devices are followed on a only: b's and c's alerts reach those calls relayed, and each delivery is
        // told back to the owner, whose outbox entry then leaves as if its own call had taken it.
        let (counts, tasks) = Self.followAlerts([clients[0]], devices)
        #expect(await Self.alertCallsOpen([nodes[0]], devices.count))
        _ = try await clients[1].publish([Self.tick("CWE", 150)])
        let fired = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            Self.everyCall(counts, nodes: 1, devices, atLeast: 1)
        }
        #expect(fired, "\(counts.value.withLock { $0 })")
        tasks.forEach { $0.cancel() }
        let others = Array(nodes[1...])
        let told = await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
            let firedThere = await Self.total("coinwatch_alerts_fired_total", others)
            let deliveredElsewhere = await Self.total("coinwatch_alerts_delivered_elsewhere_total", others)
            return firedThere > 0 && deliveredElsewhere == firedThere
        }
        let seen = await Self.metrics(others).map { $0.filter { $0.key.contains("alerts_") } }
        #expect(told, "\(seen)")
        // So a device's next call on its owner is not sent the alert again as pending.
        let (later, laterTasks) = Self.followAlerts(Array(clients[1...]), devices)
        defer { laterTasks.forEach { $0.cancel() } }
        #expect(await Self.alertCallsOpen(others, devices.count))
        let pendingAgain = await eventually(timeout: .seconds(3), interval: .milliseconds(50)) {
            later.value.withLock { !$0.isEmpty }
        }
        #expect(!pendingAgain, "\(later.value.withLock { $0 })")
    }

    /// Every tick a node publishes goes to JetStream asynchronously, and nats.c hands each published message to the
    /// acknowledgement handler to destroy. Kept, each tick cost about 600 bytes for good: a node running a feed at
    /// 1,000 ticks/s grew by 2 GB an hour. After a warm-up, 60,000 more ticks (about 36 MB then) must leave the
    /// node's resident memory within a bound that the library's own buffers and the pending acknowledgements
    /// (at most 4,096 messages) stay far below.
    @Test(.disabled(if: BuiltProducts.areInstrumented, "a sanitizer's quarantine keeps freed memory resident"))
    func aNodePublishingTicksKeepsItsMemory() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let node = try await Self.startNode(nats, "a")
        defer { node.crash() }
        let client = Self.client(node)
        defer { client.close() }
        var sent = 0
        func publish(_ calls: Int) async throws {
            for _ in 0..<calls {
                let ticks = (0..<1_000).map { Self.tick("CWM\($0 % 10)", Int64(1_000 + sent + $0)) }
                _ = try await client.publish(ticks)
                sent += ticks.count
            }
        }
        func publishedAll() async -> Bool {
            let target = Double(sent)
            return await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
                (await Self.metrics(node)["coinwatch_cluster_ticks_published_total"] ?? 0) >= target
            }
        }
        try await publish(20)
        #expect(await publishedAll())
        let before = await Self.metrics(node)["process_resident_memory_bytes"] ?? 0
        try await publish(60)
        #expect(await publishedAll())
        let after = await Self.metrics(node)["process_resident_memory_bytes"] ?? 0
        #expect(before > 0)
        #expect(after - before < 12 * 1_048_576, "resident memory \(Int(before)) -> \(Int(after)) bytes over 60,000 ticks")
    }

    @Test func theShardsOfAKilledNodeFireOnTheOthersWithNothingLost() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let devices = (0..<12).map { "failover-\($0)" }
        let (nodes, clients) = try await Self.armedCluster(nats, devices, "CWF")
        defer { nodes.forEach { $0.crash() } }
        defer { clients.forEach { $0.close() } }
        // Node c dies with its shards; the crossing comes at once, before anyone could take them over.
        nodes[2].crash()
        let (counts, tasks) = Self.followAlerts(Array(clients[..<2]), devices)
        defer { tasks.forEach { $0.cancel() } }
        #expect(await Self.alertCallsOpen(Array(nodes[..<2]), devices.count))
        _ = try await clients[1].publish([Self.tick("CWF", 150)])
        // Every device's alert arrives: those of c's shards once a or b took them over (documented window:
        // about lease TTL + a heartbeat; 2 s + 0.7 s here), fired from what they held back.
        let fired = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            Self.everyCall(counts, nodes: 2, devices, atLeast: 1)
        }
        #expect(fired, "\(counts.value.withLock { $0 })")
        let survivors = Array(nodes[..<2])
        let tookOver = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) { Self.shardsSettled(survivors) }
        #expect(tookOver, "\(survivors.map(Self.shards))")
        // At most the documented duplicate: one extra delivery of a crossing inside the window, per call.
        #expect(counts.value.withLock { $0.values.allSatisfy { $0 <= 2 } }, "\(counts.value.withLock { $0 })")
    }

    @Test func aPendingAlertSurvivesItsOwnerAndReachesTheDeviceFromTheNewOwner() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let devices = (0..<24).map { "away-\($0)" }
        let (nodes, clients) = try await Self.armedCluster(nats, devices, "CWO")
        defer { nodes.forEach { $0.crash() } }
        defer { clients.forEach { $0.close() } }
        // Nobody follows the devices: each crossing waits in its owner's outbox (and in the bucket's copy).
        _ = try await clients[0].publish([Self.tick("CWO", 150)])
        let fired = await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
            await Self.total("coinwatch_alerts_fired_total", nodes) == Double(devices.count)
        }
        #expect(fired)
        // Past the span a new owner replays held-back alerts over (lease TTL 2 s × 17/12 + 1 s here), so only the
        // restored outbox can bring c's devices their alert; then c dies.
        try await Task.sleep(for: .milliseconds(4_500))
        nodes[2].crash()
        let survivors = Array(nodes[..<2])
        let tookOver = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) { Self.shardsSettled(survivors) }
        #expect(tookOver, "\(survivors.map(Self.shards))")
        // Every device, c's included, gets its crossing as a pending alert from whichever survivor owns it now.
        let (counts, tasks) = Self.followAlerts(Array(clients[..<2]), devices)
        defer { tasks.forEach { $0.cancel() } }
        let delivered = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            counts.value.withLock { counts in
                devices.allSatisfy { device in counts["0/\(device)", default: 0] + counts["1/\(device)", default: 0] >= 1 }
            }
        }
        #expect(delivered, "\(counts.value.withLock { $0 })")
        let restored = await Self.total("coinwatch_alerts_outbox_restored_total", survivors)
        #expect(restored >= 1, "c owned none of the devices' shards, or nothing was restored")
    }

    @Test func aClientGivenSeveralNodesMovesToAnotherWhenOneGoesAway() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let a = try await Self.startNode(nats, "a")
        defer { a.crash() }
        let b = try await Self.startNode(nats, "b")
        defer { b.crash() }
        // A port nothing listens on first: the client skips it.
        let dead = try await ServerProcess.start()
        let deadAddress = dead.address
        dead.crash()
        let client = CoinWatchClient(configuration: try .ofDaemons("\(deadAddress),\(a.address),\(b.address)"))
        defer { client.close() }
        let saved = try await client.setRule(device: "roamer", symbol: "BTC", below: ExactDecimal(Int64(5)), above: nil)
        #expect(try await client.healthCheck().cluster?.nodeID == "a")
        // Node a dies: the next call connects to b, where the save is readable.
        a.crash()
        let moved = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            (try? await client.healthCheck(timeout: .seconds(5)).cluster?.nodeID) == "b"
        }
        #expect(moved)
        let read = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { (try? await client.settings(device: "roamer").version) == saved.version }
        #expect(read)
    }

    /// Saves `device` (its BTC rule below `price`) until one is acknowledged: while a NATS server is down its
    /// streams may be electing a leader, and a save then fails UNAVAILABLE (nothing stored) and is retried. The
    /// bound is generous: on a busy machine the reconnect and the election took over a minute once.
    static func saveRetrying(_ client: CoinWatchClient, _ device: String, _ price: Int64) async -> V1.Settings? {
        var saved: V1.Settings?
        _ = await eventually(timeout: .seconds(180), interval: .milliseconds(200)) {
            saved = try? await client.setRule(device: device, symbol: "BTC", below: ExactDecimal(price), above: nil)
            return saved != nil
        }
        return saved
    }

    @Test func losingOneNATSServerOfThreeLosesNothing() async throws {
        let nats = try await NATSCluster.start(servers: 3)
        func node(_ name: String) async throws -> ServerProcess {
            try await ServerProcess.start(arguments: [
                "--cluster", nats.urls, "--node-id", name, "--lease-ttl", "2s", "--cluster-replicas", "3",
            ])
        }
        let a = try await node("a")
        defer { a.crash() }
        let b = try await node("b")
        defer { b.crash() }
        let clients = [a, b].map(Self.client)
        defer { clients.forEach { $0.close() } }
        var acknowledged: [String: UInt64] = [:]
        for index in 0..<10 {
            let saved = await Self.saveRetrying(clients[index % 2], "r3-\(index)", Int64(index + 1))
            acknowledged["r3-\(index)"] = saved?.version
        }
        #expect(acknowledged.values.count == 10)
        // One server of three dies (the one either node may be connected to): a quorum remains.
        nats.servers[0].kill()
        for index in 10..<20 {
            let saved = await Self.saveRetrying(clients[index % 2], "r3-\(index)", Int64(index + 1))
            acknowledged["r3-\(index)"] = saved?.version
        }
        #expect(acknowledged.count == 20 && acknowledged.values.allSatisfy { $0 == 1 }, "\(acknowledged)")
        _ = try? await clients[0].publish([Self.tick("CWR", 7)])
        let priced = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            (try? await clients[1].prices(symbols: ["CWR"]).first?.price) == V1.Decimal(ExactDecimal(Int64(7)))
        }
        #expect(priced)
        // Restarted, it rejoins (JetStream catches it up); every acknowledged save is readable on both nodes.
        try await nats.servers[0].start()
        let second = await Self.saveRetrying(clients[1], "r3-0", 100)
        #expect(second?.version == 2)
        let everywhere = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            for client in clients {
                for (device, version) in acknowledged {
                    guard let stored = try? await client.settings(device: device).version, stored >= version else {
                        return false
                    }
                }
            }
            return true
        }
        #expect(everywhere)
    }

    /// Every node's owned-shard mask from Health, in `nodes` order; nil while one does not answer.
    static func ownedShards(_ clients: [CoinWatchClient]) async -> [UInt64]? {
        var masks: [UInt64] = []
        for client in clients {
            guard let cluster = try? await client.healthCheck(timeout: .seconds(5)).cluster else { return nil }
            masks.append(cluster.ownedShards)
        }
        return masks
    }

    @Test func aNodeCutOffFromNATSStopsFiringBeforeAnotherTakesItsShards() async throws {
        // Three NATS servers (R3) that do not tell clients about each other: c knows only the third, so killing
        // it cuts c off from NATS while a and b, on the other two, keep a quorum.
        let nats = try await NATSCluster.start(servers: 3, advertise: false)
        func node(_ name: String, _ servers: [Int]) async throws -> ServerProcess {
            try await ServerProcess.start(arguments: [
                "--cluster", servers.map { nats.servers[$0].url }.joined(separator: ","), "--node-id", name,
                "--lease-ttl", "2s", "--cluster-replicas", "3",
            ])
        }
        let a = try await node("a", [0, 1])
        defer { a.crash() }
        let b = try await node("b", [1, 0])
        defer { b.crash() }
        let c = try await node("c", [2])
        defer { c.crash() }
        let nodes = [a, b, c]
        let clients = nodes.map(Self.client)
        defer { clients.forEach { $0.close() } }
        let settled = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) { Self.shardsSettled(nodes) }
        #expect(settled, "\(nodes.map(Self.shards))")
        let before = try #require(await Self.ownedShards(clients))
        #expect(before[2] != 0 && (before[0] | before[1]) & before[2] == 0 && before[0] | before[1] | before[2] == .max)
        nats.servers[2].kill()
        // Each round reads a and b before c. c holds its shards over one span of time, from before the cut to the
        // moment it stops; a shard a or b held when read, and c still held when read after, was held by both at
        // the first read: an overlap seen is a real one, however slowly the reads go on a busy machine.
        var overlaps: [String] = []
        var cStopped = false
        var takenOver = false
        // A hang guard, not a measure: the loop ends as soon as c has stopped and a and b hold every shard, which
        // takes a few lease TTLs; instrumented builds in a full parallel run have needed more than 90 s.
        let deadline = ContinuousClock.now + .seconds(240)
        while ContinuousClock.now < deadline && !(cStopped && takenOver) {
            if let masks = await Self.ownedShards(clients) {
                let shared = (masks[0] | masks[1]) & masks[2]
                if shared != 0 { overlaps.append(String(shared, radix: 16)) }
                cStopped = cStopped || masks[2] == 0
                takenOver = masks[0] | masks[1] == .max
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(overlaps.count == 0, "shards owned by c and another node at once: \(overlaps.prefix(5))")
        #expect(cStopped, "c still owns shards it can no longer renew")
        let after = await Self.ownedShards(clients) ?? []
        #expect(takenOver, "a and b did not take c's shards: \(after)")
        // c's control thread sends nothing while cut off, so it sees its leases lapse on time too (it does not wait
        // out a NATS timeout per lease): Health lists none of them.
        let released = await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
            guard let leases = try? await clients[2].healthCheck(timeout: .seconds(5)).cluster?.leases else { return false }
            return !leases.contains { $0.key.hasPrefix("shard.") }
        }
        #expect(released)
    }

    @Test func theLiveFeedRunsOnOneNodeAndMovesWhenItDies() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        var nodes: [ServerProcess] = []
        defer { nodes.forEach { $0.crash() } }
        for name in ["a", "b"] {
            nodes.append(try await ServerProcess.start(arguments: [
                "--cluster", nats.urls, "--node-id", name, "--lease-ttl", "2s", "--feed", "sim",
            ]))
        }
        let clients = nodes.map(Self.client)
        defer { clients.forEach { $0.close() } }
        func runners() async -> [Bool]? {
            var result: [Bool] = []
            for client in clients {
                guard let cluster = try? await client.healthCheck(timeout: .seconds(5)).cluster else { return nil }
                result.append(cluster.runsFeed)
            }
            return result
        }
        let one = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) { await runners()?.filter { $0 }.count == 1 }
        #expect(one)
        let runner = try #require(await runners()?.firstIndex(of: true))
        let other = 1 - runner
        // The feed's ticks reach the node that does not run it.
        let flowing = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            (try? await clients[other].prices().isEmpty) == false
        }
        #expect(flowing)
        nodes[runner].crash()
        let movedOver = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            (try? await clients[other].healthCheck(timeout: .seconds(5)).cluster?.runsFeed) == true
        }
        #expect(movedOver)
        let before = try await clients[other].prices().map(\.timeMs).max() ?? 0
        let fresh = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            ((try? await clients[other].prices().map(\.timeMs).max()) ?? 0) > before
        }
        #expect(fresh)
    }

    @Test("a live feed's source count and its symbol turning stale reach the node that does not run the feed; health shows the feed where it runs")
    func staleAndSourcesReachEveryNode() async throws {
        let nats = try await NATSCluster.start(servers: 1)
        let exchange = try await FakeExchange.start(venue: "kraken")
        var nodes: [ServerProcess] = []
        defer { nodes.forEach { $0.crash() } }
        for name in ["a", "b"] {
            nodes.append(try await ServerProcess.start(arguments: [
                "--cluster", nats.urls, "--node-id", name, "--lease-ttl", "2s", "--feed", "kraken",
                "--feed-url", "kraken=\(exchange.url(path: "/ws"))", "--symbols", "BTC", "--max-price-age", "1s",
            ]))
        }
        let clients = nodes.map(Self.client)
        defer { clients.forEach { $0.close() } }
        #expect(await eventually(timeout: .seconds(60)) { !exchange.messages.isEmpty }, "the feed's node subscribed")
        let runner = Mutex<Int?>(nil)
        let found = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            for (index, client) in clients.enumerated()
            where (try? await client.healthCheck(timeout: .seconds(5)).cluster?.runsFeed) == true {
                runner.withLock { $0 = index }
                return true
            }
            return false
        }
        #expect(found)
        let other = clients[1 - (try #require(runner.withLock { $0 }))]
        // StreamPrices on the other node: its updates carry the source count and the stale flag.
        let updates = Mutex<[V1.PriceUpdate]>([])
        let reader = Task {
            do {
                for try await update in other.streamPrices(symbols: ["BTC"]) { updates.withLock { $0.append(update) } }
            } catch {}
        }
        defer { reader.cancel() }
        // Subscribed before the trade: the node has no BTC price yet, so the stream's first message is live.
        try await Task.sleep(for: .milliseconds(500))
        exchange.trade("BTC", "64250.5")
        // One venue quoted it: the price and its source count on the other node, then, a second without a quote
        // later, stale there too; the next quote clears it.
        let quoted = await eventually(timeout: .seconds(60), interval: .milliseconds(20)) {
            updates.withLock { $0.contains { $0.price == V1.Decimal(mantissa: 642_505, scale: 1) && $0.sources == 1 } }
        }
        #expect(quoted, "\(updates.withLock { $0 })")
        let stale = await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            updates.withLock { $0.last?.stale == true }
        }
        #expect(stale, "\(updates.withLock { $0 })")
        exchange.trade("BTC", "64251")
        // Looked for among all updates, not as the last: a second later, without another quote, it turns stale again.
        let cleared = await eventually(timeout: .seconds(60), interval: .milliseconds(20)) {
            updates.withLock { $0.contains { !$0.stale && $0.price == V1.Decimal(mantissa: 64_251, scale: 0) } }
        }
        #expect(cleared, "\(updates.withLock { $0 })")
        let beforeClearing = updates.withLock { all in
            all.prefix { $0.stale || $0.price != V1.Decimal(mantissa: 64_251, scale: 0) }
        }
        #expect(beforeClearing.filter(\.stale).count == 1, "one update says it turned stale: \(beforeClearing)")
        #expect(beforeClearing.last?.stale == true, "the stale update came right before the next price")
        // Health describes the feed where it runs: connected, with the messages it read; the other node runs none.
        let runnerFeeds = try await clients[try #require(runner.withLock { $0 })].healthCheck().feeds
        #expect(runnerFeeds.map(\.name) == ["kraken"])
        #expect(runnerFeeds.allSatisfy { $0.connected && $0.messages > 0 }, "\(runnerFeeds)")
        #expect(try await other.healthCheck().feeds.allSatisfy { !$0.connected && $0.messages == 0 })
    }

    /// Whether `node` is in the cluster: Health says NATS is connected and a tick published on it comes back to
    /// its own stream through the bus (every node, the publisher included, delivers from its subscription).
    static func joined(_ node: ServerProcess) async throws -> Bool {
        let client = Self.client(node)
        defer { client.close() }
        guard try await client.healthCheck().cluster?.natsState == "connected" else { return false }
        let (updates, task) = Self.follow(client, "CWJ")
        defer { task.cancel() }
        _ = try await client.publish([Self.tick("CWJ", 7)])
        return await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { updates.prices.contains("7") }
    }

    /// `--cluster-ca` and `--cluster-user` with the password in `COINWATCH_CLUSTER_PASSWORD`, against a NATS server
    /// that demands TLS and a user: the node joins and its ticks cross the bus; the password is in no line it
    /// logs, at the most detailed level. A wrong password keeps a node from starting, with an error that does not
    /// repeat it.
    @Test func aNodeJoinsOverTLSWithAUserAndNeverLogsThePassword() async throws {
        let pki = try await TestCertificates.shared()
        let nats = try await NATSCluster.start(servers: 1, arguments: [
            "--user", "node", "--pass", "pw-Secret-9", "--tls",
            "--tlscert", pki.server.certificateFile, "--tlskey", pki.server.privateKeyFile,
        ])
        let url = "tls://localhost:\(try #require(nats.urls.split(separator: ":").last))"
        let options = ["--cluster", url, "--node-id", "secure", "--lease-ttl", "2s", "--cluster-ca", pki.caFile,
                       "--cluster-user", "node", "--log-level", "trace"]
        let node = try await ServerProcess.start(
            arguments: options, environment: ["COINWATCH_CLUSTER_PASSWORD": "pw-Secret-9"])
        defer { node.crash() }
        #expect(try await Self.joined(node))
        #expect(!node.log.contains("pw-Secret"), "\(node.log)")

        let refused = try await onOwnThread { try ServerProcess.run([
            "--listen", "127.0.0.1:0", "--data", FileManager.default.temporaryDirectory.path + "/cw-cluster-\(UUID().uuidString)",
            "--feed", "none", "--cluster", url, "--cluster-ca", pki.caFile, "--cluster-user", "node",
            "--cluster-password", "pw-Wrong-7",
        ]) }
        #expect(refused.status != 0)
        #expect(refused.output.contains("cannot join the cluster"), "\(refused.output)")
        #expect(refused.output.contains("Authorization Violation"), "\(refused.output)")
        #expect(!refused.output.contains("pw-"), "\(refused.output)")
    }

    /// `--cluster-creds` against an operator-mode NATS (decentralised authentication): the node signs in with its
    /// user JWT and NKey seed, creates its streams and buckets in its account, and its ticks cross the bus; the
    /// seed is in no line it logs.
    @Test func aNodeJoinsWithACredentialsFileAndNeverLogsTheSeed() async throws {
        let accounts = try await onOwnThread { try NATSOperatorMode() }
        let nats = try await NATSCluster.start(servers: 1, arguments: ["-c", accounts.serverConfiguration])
        let node = try await ServerProcess.start(arguments: [
            "--cluster", nats.urls, "--node-id", "creds", "--lease-ttl", "2s", "--cluster-creds", accounts.credentialsFile,
            "--log-level", "trace",
        ])
        defer { node.crash() }
        #expect(try await Self.joined(node))
        #expect(!node.log.contains(accounts.userSeed), "\(node.log)")
    }

    @Test func aNodeThatCannotReachNATSRefusesToStart() async throws {
        let result = try await onOwnThread { try ServerProcess.run([
            "--listen", "127.0.0.1:0", "--data", FileManager.default.temporaryDirectory.path + "/cw-cluster-\(UUID().uuidString)",
            "--feed", "none", "--cluster", "nats://127.0.0.1:1",
        ]) }
        #expect(result.status != 0)
        #expect(result.output.contains("cannot join the cluster"), "\(result.output)")
        let missing = "/nonexistent/coinwatch-\(UUID().uuidString).creds"
        let unreadable = try await onOwnThread { try ServerProcess.run([
            "--listen", "127.0.0.1:0", "--data", FileManager.default.temporaryDirectory.path + "/cw-cluster-\(UUID().uuidString)",
            "--feed", "none", "--cluster", "nats://127.0.0.1:1", "--cluster-creds", missing,
        ]) }
        #expect(unreadable.status != 0)
        #expect(unreadable.output.contains(
            "cannot join the cluster: cannot read the NATS credentials file \(missing): No such file or directory"),
            "\(unreadable.output)")
    }
}
