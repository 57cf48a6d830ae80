import CoinWatchAuth
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchService
import Synchronization

/// The settings bucket as the settings store's replicator, and the consumer that brings other nodes' saves in.
///
/// The bucket (`coinwatch-settings`, one key per device, history 1) is the store of record: a value's revision is
/// its stream sequence. `replicate` publishes each changed device with JetStream's expected last subject sequence
/// set to the revision this node's copy rests on (`Nats-Expected-Last-Subject-Sequence`), so of two nodes saving
/// the same device from the same version exactly one is stored; the other gets "wrong last sequence" and the
/// writer refreshes and runs its request again (an `expected_version` save then answers `ABORTED`).
///
/// `cw-cluster-settings` (a `BucketFollower`) reads the bucket's stream from the first message and hands every
/// value to the store (`applyReplicated`), which applies those newer than what this node's copy rests on: a node
/// that starts reads each device's last value once (history 1), then follows live. A delete is stored as an empty
/// value, so it is conditional like a save and a catching-up node sees it as an ordinary value.
final class ClusterSettings: SettingsReplicator, @unchecked Sendable {
    // @unchecked Sendable: `follower` is set once in `init`; the rest is immutable, atomic or behind a Mutex.
    let bucket: KeyValueBucket
    /// Weak: the store writes through this replicator and so owns it (`SettingsStore.replicate`); a strong
    /// reference back would keep both, and the NATS connection, alive after everyone else let them go.
    weak let store: SettingsStore?
    /// Where a save's attached credential (a device's first secret) is stored before the save.
    let credentials: (any CredentialReplicator)?
    let logger: Logger
    /// Device (canonical id) → the revision this node's copy rests on.
    private let revisions = Mutex<[String: UInt64]>([:])
    private var follower: BucketFollower!
    let applied = Atomic<Int>(0)
    let conflicts = Atomic<Int>(0)
    /// The stream sequence of the last value read, and how many the consumer said were still to come.
    var lastRead: UInt64 { follower.lastRead.load(ordering: .relaxed) }
    var pendingAtLastRead: UInt64 { follower.pendingAtLastRead.load(ordering: .relaxed) }

    init(bucket: KeyValueBucket, store: SettingsStore, credentials: (any CredentialReplicator)?, logger: Logger) {
        self.bucket = bucket
        self.store = store
        self.credentials = credentials
        self.logger = logger
        follower = BucketFollower(bucket: bucket, threadName: "cw-cluster-settings") { [weak self] message in
            self?.hand(message)
        }
    }

    /// Reads what the bucket holds now into the store, makes the bucket the store's replicator, and starts
    /// following it. Blocks until the values present at the start were handed to the store.
    func start() throws(ClusterError) {
        try follower.start { store?.replicate(through: self) }
    }

    func stop() {
        follower.stop()
    }

    private func hand(_ message: NATSMessage) {
        guard let device = follower.device(of: message) else {
            logger.warning("a settings key that names no device", ["subject": message.subject])
            return
        }
        let settings: V1.Settings?
        if message.data.isEmpty {
            settings = nil
        } else if let decoded = try? V1.Settings(serializedBytes: message.data) {
            settings = decoded
        } else {
            logger.warning("a settings value that does not decode", ["device": device.rawValue])
            return
        }
        if store?.applyReplicated(device, settings, revision: message.streamSequence) == true {
            applied.add(1, ordering: .relaxed)
        }
    }

    static func key(_ device: DeviceID) -> String { ClusterLayout.keyToken(device.rawValue) }

    // MARK: SettingsReplicator (the settings writer's thread)

    /// A round's writes go out together, each conditional on its own device's revision, and the round waits for
    /// all their acknowledgements at once: one round trip to JetStream per round, not one per device. A device
    /// written twice in a round goes again in a following batch, resting on the first write's revision.
    func replicate(_ writes: [SettingsReplicaWrite]) -> [SettingsReplicaOutcome] {
        var outcomes = [SettingsReplicaOutcome?](repeating: nil, count: writes.count)
        // A device's first secret first: a save that lost the device to another node's claim is not stored.
        for (index, write) in writes.enumerated() {
            guard let attached = write.attached else { continue }
            do throws(AuthError) {
                guard let credentials else {
                    throw AuthError(code: .unavailable, message: "no cluster store for the device's secret")
                }
                try credentials.create(attached.key, attached.value)
            } catch {
                outcomes[index] = .failed(error.rpcError)
            }
        }
        var remaining = writes.indices.filter { outcomes[$0] == nil }
        while !remaining.isEmpty {
            var devices = Set<String>()
            var batch: [Int] = []
            var later: [Int] = []
            for index in remaining {
                if devices.insert(writes[index].device.rawValue).inserted { batch.append(index) } else { later.append(index) }
            }
            let expected = revisions.withLock { revisions in batch.map { revisions[writes[$0].device.rawValue] ?? 0 } }
            let results = bucket.updateAll(zip(batch, expected).map { index, revision in
                (Self.key(writes[index].device), writes[index].record ?? [], revision)
            })
            for (index, result) in zip(batch, results) {
                let device = writes[index].device.rawValue
                switch result {
                case .success(let revision):
                    revisions.withLock { $0[device] = max($0[device] ?? 0, revision) }
                    outcomes[index] = .stored
                case .failure(let error) where error.code == .conflict:
                    conflicts.add(1, ordering: .relaxed)
                    outcomes[index] = .conflict
                case .failure(let error):
                    outcomes[index] = .failed(RPCError(code: .unavailable, message: "settings not replicated: \(error.message)"))
                }
            }
            remaining = later
        }
        return outcomes.map { $0! }
    }

    func refresh(_ device: DeviceID) -> SettingsReplicaRefresh {
        let entry: KVEntry?
        do {
            entry = try bucket.get(Self.key(device))
        } catch {
            return .failed(RPCError(code: .unavailable, message: "settings not readable from the cluster: \(error.message)"))
        }
        guard let entry else { return .current }
        let settings: V1.Settings?
        if entry.value.isEmpty {
            settings = nil
        } else {
            guard let decoded = try? V1.Settings(serializedBytes: entry.value) else {
                return .failed(RPCError(code: .dataLoss, message: "the cluster's settings of \(device.rawValue) do not decode"))
            }
            settings = decoded
        }
        return accept(device, revision: entry.revision) ? .newer(settings) : .current
    }

    func accept(_ device: DeviceID, revision: UInt64) -> Bool {
        revisions.withLock { revisions in
            guard revision > revisions[device.rawValue] ?? 0 else { return false }
            revisions[device.rawValue] = revision
            return true
        }
    }
}
