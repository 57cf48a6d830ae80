import CoinWatchAuth
import CoinWatchLogging
import Synchronization

/// The credentials bucket as the credential store's replicator, and the follower that applies other nodes' changes.
///
/// The bucket (`coinwatch-credentials`, history 1) holds every service key and device secret record, under the
/// credential store's own key (`auth:key:<id>`, `auth:device:<device>`, escaped by `ClusterLayout.keyToken`), as
/// this node's store keeps it: hashes, never secrets. A removed device secret is an empty value, so a later claim
/// is a conditional write like any other. Every node applies every value in the stream's order
/// (`CredentialStore.applyReplicated`), its own included, which changes nothing the second time.
final class ClusterCredentials: CredentialReplicator, @unchecked Sendable {
    // @unchecked Sendable: `follower` is set once in `init`; the rest is immutable or atomic.
    let bucket: KeyValueBucket
    /// Weak: the credential store writes through this replicator and so owns it.
    weak let credentials: CredentialStore?
    let logger: Logger
    private var follower: BucketFollower!
    /// Records applied and records refused (they do not decode, or this node's store failed), for tests and logs.
    let applied = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    /// How often a claim races a concurrent change of the same key before it gives up.
    static let createAttempts = 8
    /// The keys (tokens) the catch-up read, while `start` runs; nil afterwards.
    private let keysAtStart = Mutex<Set<String>?>([])

    init(bucket: KeyValueBucket, credentials: CredentialStore, logger: Logger) {
        self.bucket = bucket
        self.credentials = credentials
        self.logger = logger
        follower = BucketFollower(bucket: bucket, threadName: "cw-cluster-credentials") { [weak self] message in
            self?.hand(message)
        }
    }

    /// Applies what the bucket holds, offers the bucket the records only this node has (keys made before its first
    /// start in the cluster), makes the bucket the store of record and starts following it. Blocks until done.
    func start() throws(ClusterError) {
        try follower.start()
        let present = keysAtStart.withLock { keys in
            defer { keys = nil }
            return keys ?? []
        }
        guard let credentials else { return }
        let records: [(key: [UInt8], value: [UInt8])]
        do {
            records = try credentials.storedRecords()
        } catch {
            throw ClusterError(code: .failed, message: "cannot read this node's credentials: \(error.message)")
        }
        var offered = 0
        for record in records {
            // Only where the bucket has never held the key: one it holds (even removed) is the cluster's word. The
            // catch-up read every key the bucket held; a key stored since is refused by the create below.
            guard !present.contains(Self.token(record.key)) else { continue }
            do {
                try bucket.create(Self.token(record.key), record.value)
                offered += 1
            } catch where error.code == .conflict {
                continue  // another node stored it meanwhile; its value arrives through the follower
            }
        }
        if offered > 0 { logger.info("offered this node's credentials to the cluster", ["records": "\(offered)"]) }
        credentials.replicate(through: self)
    }

    func stop() {
        follower.stop()
    }

    static func token(_ key: [UInt8]) -> String { ClusterLayout.keyToken(String(decoding: key, as: UTF8.self)) }

    private func hand(_ message: NATSMessage) {
        if let token = follower.key(of: message) { keysAtStart.withLock { _ = $0?.insert(token) } }
        guard let text = follower.keyText(of: message) else {
            logger.warning("a credentials key that names no credential", ["subject": message.subject])
            refused.add(1, ordering: .relaxed)
            return
        }
        do throws(AuthError) {
            try credentials?.applyReplicated(key: Array(text.utf8), value: message.data)
            applied.add(1, ordering: .relaxed)
        } catch {
            // The record names a key id or a device, never a secret (the store keeps only hashes).
            logger.warning("a credential from the cluster not applied", ["key": text, "reason": error.message])
            refused.add(1, ordering: .relaxed)
        }
    }

    // MARK: CredentialReplicator (the Admin queue, the settings writer)

    func store(_ key: [UInt8], _ value: [UInt8]?) throws(AuthError) {
        do {
            try bucket.put(Self.token(key), value ?? [])
        } catch {
            throw AuthError(code: .storeFailure, message: "credential not stored in the cluster: \(error.message)")
        }
    }

    func create(_ key: [UInt8], _ value: [UInt8]) throws(AuthError) {
        let token = Self.token(key)
        for _ in 0..<Self.createAttempts {
            let current: KVEntry?
            do {
                current = try bucket.get(token)
            } catch {
                throw Self.notStored(error)
            }
            if let current, !current.value.isEmpty {
                // This very record: a save that ran again after losing a settings race.
                if current.value == value { return }
                throw AuthError(code: .alreadyClaimed, message: "the device was claimed on another node; send its token")
            }
            do {
                try bucket.update(token, value, revision: current?.revision ?? 0)
                return
            } catch where error.code == .conflict {
                continue  // changed since the read: read again
            } catch {
                throw Self.notStored(error)
            }
        }
        throw AuthError(code: .aborted, message: "the device is being claimed on other nodes; retry")
    }

    private static func notStored(_ error: ClusterError) -> AuthError {
        AuthError(code: .storeFailure, message: "device secret not stored in the cluster: \(error.message)")
    }
}
