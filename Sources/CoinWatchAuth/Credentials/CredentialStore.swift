import CoinWatchCore
public import CoinWatchModel
public import CoinWatchProto
public import CoinWatchStore
import CoinWatchTLS
import Synchronization


/// Every credential the server accepts, in memory, backed by LevelDB (`AuthStorage`).
///
/// Checking a credential never touches LevelDB: keys and device-secret hashes are loaded at start and kept here,
/// and every change (a key created or revoked, a device claimed or reset) is written through, synced, before it is
/// visible. `generation` goes up whenever a credential stops being valid (a revocation, a device reset), so code
/// that caches a checked credential (an `AuthSession`, per connection) revalidates with one atomic load per call
/// and sees a revocation on its next call.
public final class CredentialStore: Sendable {
    /// The id a `--publish-token` is known by in logs and limits: it acts as a key with `prices:publish`.
    public static let publishTokenID = "publish-token"

    let database: Database?
    /// The store's settings journal, through which every change is committed when it is given (see `commit`).
    let journal: WriteAheadJournal?
    let clock: @Sendable () -> Int64
    let keys: Mutex<[String: StoredKey]>
    let deviceShards: [DeviceShard]
    private let generationCounter = Atomic<UInt64>(1)
    private let claimCounter = Atomic<UInt64>(0)
    /// Serialises the writes of key and device changes, so two admins cannot interleave a read and a write.
    let writeLock = Mutex<Void>(())
    /// Cluster mode's store of record (`replicate(through:)`); nil on a single node.
    let replicator = Mutex<(any CredentialReplicator)?>(nil)
    private let publishTokenHash: SecretHash?
    private let invalidationObservers = Mutex<[@Sendable () -> Void]>([])

    /// One of the device tables, split so that loops checking different devices rarely meet on a lock.
    final class DeviceShard: Sendable {
        let table: Mutex<[String: DeviceState]>

        init(_ entries: [String: DeviceState]) {
            table = Mutex(entries)
        }
    }

    enum DeviceState: Sendable {
        /// The device's secret hash.
        case claimed(SecretHash)
        /// A claim in progress (`beginClaim`), not yet durable.
        case pending(claim: UInt64)
    }

    /// Opens the store: loads every key and device secret from `database` (nil keeps everything in memory, for
    /// tests and tools).
    ///
    /// - Parameters:
    ///   - journal: the store's settings journal, opened (and so replayed) before this loads; changes are then
    ///     committed through it. A device's first save writes the device's secret through that journal, and a later
    ///     open replays the journal's records after its last checkpoint, so a reset written beside it would be
    ///     undone by the replay: the old secret would come back. Nil writes straight to `database`, for stores
    ///     whose settings never go through a journal (tests).
    ///   - publishToken: the `--publish-token`, accepted as a key with `prices:publish`; nil or empty for none.
    ///   - clock: milliseconds since the Unix epoch, for creation and revocation times (the wall clock by default).
    public init(
        database: Database?, journal: WriteAheadJournal? = nil, publishToken: String? = nil,
        clock: (@Sendable () -> Int64)? = nil
    ) throws(AuthError) {
        self.database = database
        self.journal = journal
        self.clock = clock ?? { WallClock.milliseconds() }
        var keyTable: [String: StoredKey] = [:]
        var shards = [[String: DeviceState]](repeating: [:], count: Self.shardCount)
        if let database {
            let loaded = try AuthStorage.load(database)
            for key in loaded.keys { keyTable[key.key.id] = key }
            for (device, record) in loaded.devices {
                shards[Self.shardIndex(device)][device.rawValue] = .claimed(record.secretHash)
            }
        }
        keys = Mutex(keyTable)
        deviceShards = shards.map(DeviceShard.init)
        publishTokenHash = publishToken.flatMap { $0.isEmpty ? nil : SecretHash(of: Array($0.utf8)) }
    }

    /// Goes up each time a credential stops being valid; see the type's description.
    public var generation: UInt64 { generationCounter.load(ordering: .acquiring) }

    /// Runs `observer` (on the thread that made the change) each time a credential stops being valid, after
    /// `generation` moved: for holders of checks made earlier that are not asked again (open streams).
    public func onInvalidation(_ observer: @escaping @Sendable () -> Void) {
        invalidationObservers.withLock { $0.append(observer) }
    }

    /// A credential stopped being valid: moves the generation, then tells the observers.
    func invalidated() {
        generationCounter.add(1, ordering: .releasing)
        for observer in invalidationObservers.withLock({ $0 }) { observer() }
    }

    /// Whether a `--publish-token` is configured.
    public var hasPublishToken: Bool { publishTokenHash != nil }

    // MARK: Checking

    /// Checks a parsed credential: who it belongs to, or why it is not valid.
    public func authenticate(_ credential: Credential) -> Result<Principal, CredentialFailure> {
        switch credential {
        case .serviceKey(let id, let secret):
            guard let stored = keys.withLock({ $0[id] }) else { return .failure(.unknownKey) }
            // The secret is checked first, so whether a key is revoked is told only to one who holds it.
            guard stored.secretHash.matches(secret) else { return .failure(.wrongSecret) }
            guard !stored.key.revoked else { return .failure(.revoked) }
            return .success(.key(id: id, scopes: stored.scopes))
        case .deviceSecret(let device, let secret):
            guard case .claimed(let hash)? = deviceState(device) else { return .failure(.unclaimedDevice) }
            guard hash.matches(secret) else { return .failure(.wrongSecret) }
            return .success(.device(device))
        case .opaque(let token):
            guard let publishTokenHash else { return .failure(.unknownToken) }
            guard publishTokenHash.matches(token) else { return .failure(.unknownToken) }
            return .success(.key(id: Self.publishTokenID, scopes: ScopeSet([.pricesPublish])))
        }
    }

    // MARK: Service keys

    /// Creates a key with `scopes`, stores it (synced) and returns it with its token: the only time the token exists
    /// outside the caller's hands.
    public func createKey(name: String, scopes: ScopeSet) throws(AuthError) -> (key: V1.ServiceKey, token: String) {
        try Self.validate(name: name)
        guard !scopes.isEmpty else { throw AuthError(code: .invalidArgument, message: "a key needs at least one scope") }
        return try writeLock.withLock { _ throws(AuthError) in
            var id: String
            repeat {
                id = try Self.random(8).map { byte in
                    let hex = String(byte, radix: 16)
                    return byte < 16 ? "0" + hex : hex
                }.joined()
            } while keys.withLock({ $0[id] != nil })
            let secret = try Self.random(Credential.secretBytes)
            let key = V1.ServiceKey(id: id, name: name, scopes: scopes.names, createdAtMs: clock())
            let stored = StoredKey(key: key, secretHash: SecretHash(of: secret), scopes: scopes)
            try put(AuthStorage.keyKey(id), stored.encoded)
            keys.withLock { $0[id] = stored }
            return (key, Credential.serviceKeyToken(id: id, secret: secret))
        }
    }

    /// The keys, oldest first (then by id).
    public func listKeys(includeRevoked: Bool = true) -> [V1.ServiceKey] {
        keys.withLock { table in
            table.values.map(\.key).filter { includeRevoked || !$0.revoked }
                .sorted { ($0.createdAtMs, $0.id) < ($1.createdAtMs, $1.id) }
        }
    }

    /// Revokes the key named by its id or its whole token. Revoking a revoked key changes nothing.
    ///
    /// From the return on, no call authenticates with the key: the record is written (synced) first, then the table
    /// changes and `generation` goes up, so every `AuthSession` checks the key again on its next call.
    public func revokeKey(_ idOrToken: String) throws(AuthError) -> V1.ServiceKey {
        let id = try Self.keyID(idOrToken)
        return try writeLock.withLock { _ throws(AuthError) in
            guard var stored = keys.withLock({ $0[id] }) else {
                throw AuthError(code: .notFound, message: "no key with id '\(id)'")
            }
            guard !stored.key.revoked else { return stored.key }
            stored.key.revoked = true
            // A revocation time of 0 would read back as "not revoked".
            stored.key.revokedAtMs = max(1, clock())
            try put(AuthStorage.keyKey(id), stored.encoded)
            keys.withLock { $0[id] = stored }
            invalidated()
            return stored.key
        }
    }

    /// A key id from an id or a token: `cwk_<id>_…` gives its id; anything else must be 16 lowercase hex digits.
    static func keyID(_ text: String) throws(AuthError) -> String {
        let bytes = Array(text.utf8)
        if case .serviceKey(let id, _)? = try? Credential(token: bytes) { return id }
        guard bytes.count == Credential.keyIDLength, bytes.allSatisfy(Credential.isLowerHex) else {
            throw AuthError(code: .invalidArgument, message: "a key id is 16 lowercase hex digits (the part after 'cwk_')")
        }
        return text
    }

    static func validate(name: String) throws(AuthError) {
        guard name.unicodeScalars.count <= 64 else {
            throw AuthError(code: .invalidArgument, message: "a key name is at most 64 characters")
        }
        for scalar in name.unicodeScalars where scalar.value < 0x20 || scalar.value == 0x7F {
            throw AuthError(code: .invalidArgument, message: "a key name may not contain control characters")
        }
    }

    // MARK: Device secrets

    /// Whether the device has a secret (or one is being issued).
    public func isClaimed(_ device: DeviceID) -> Bool { deviceState(device) != nil }

    /// How many devices have a secret.
    public var claimedDeviceCount: Int {
        deviceShards.reduce(0) { total, shard in
            total + shard.table.withLock { table in table.values.count { if case .claimed = $0 { true } else { false } } }
        }
    }

    /// Starts issuing a secret to a device that has none: marks it as being claimed, so no second claim can start,
    /// and returns the secret with the record to store.
    ///
    /// The caller writes `record` in the same batch as the write that claims the device (the first settings, a
    /// registration), so the secret is durable exactly when that write is, then calls `finishClaim` either way.
    /// - Returns: nil when the device already has a secret or another claim is in progress.
    /// - Throws: `.unavailable` when no secret can be made (the system's random source failed).
    public func beginClaim(_ device: DeviceID, issuedBy: String) throws(AuthError) -> DeviceClaim? {
        let id = claimCounter.add(1, ordering: .relaxed).newValue
        let reserved = deviceShards[Self.shardIndex(device)].table.withLock { table -> Bool in
            guard table[device.rawValue] == nil else { return false }
            table[device.rawValue] = .pending(claim: id)
            return true
        }
        guard reserved else { return nil }
        let secret: [UInt8]
        do {
            secret = try Self.random(Credential.secretBytes)
        } catch {
            deviceShards[Self.shardIndex(device)].table.withLock { $0[device.rawValue] = nil }
            throw error
        }
        let hash = SecretHash(of: secret)
        let record = DeviceSecretRecord(secretHash: hash, issuedAtMs: clock(), issuedBy: issuedBy)
        return DeviceClaim(
            id: id, device: device, token: Credential.deviceToken(device: device, secret: secret), secretHash: hash,
            recordKey: AuthStorage.deviceKey(device), recordValue: record.encoded)
    }

    /// Ends a claim: `stored` true once the claim's record is durable (the secret becomes valid), false when the
    /// write that carried it failed (the device is free to be claimed again).
    public func finishClaim(_ claim: DeviceClaim, stored: Bool) {
        deviceShards[Self.shardIndex(claim.device)].table.withLock { table in
            guard case .pending(let id)? = table[claim.device.rawValue], id == claim.id else { return }
            table[claim.device.rawValue] = stored ? .claimed(claim.secretHash) : nil
        }
    }

    /// Stores a claim's record now, for a claiming call whose own write is not a settings save (`RegisterDevice`):
    /// in the cluster's store first in cluster mode, only if no other node claimed the device (`.alreadyClaimed`
    /// otherwise), then in this node's store, synced. The claim stays pending until `finishClaim`; a call that fails
    /// after this gives the device back with `releaseClaim`. Blocks on the disk (and the network): never on an
    /// event loop.
    public func storeClaim(_ claim: DeviceClaim) throws(AuthError) {
        try replicator.withLock({ $0 })?.create(claim.recordKey, claim.recordValue)
        var batch = WriteBatch()
        batch.put(claim.recordKey, claim.recordValue)
        try commitLocally(batch)
    }

    /// Takes back a claim whose record `storeClaim` stored but whose call failed: the record is removed (in the
    /// cluster's store too) if the device still holds this claim's secret, and the device is free again. When the
    /// removal fails, the device stays claimed by the stored secret, which no one holds: an operator resets it.
    public func releaseClaim(_ claim: DeviceClaim) throws(AuthError) {
        try writeLock.withLock { _ throws(AuthError) in
            let shard = deviceShards[Self.shardIndex(claim.device)]
            // Still pending, or already applied from the cluster's store as this very secret.
            let ours = switch shard.table.withLock({ $0[claim.device.rawValue] }) {
            case .pending(let id)?: id == claim.id
            case .claimed(let hash)?: hash == claim.secretHash
            case nil: false
            }
            guard ours else { return }
            do throws(AuthError) {
                try remove(claim.recordKey)
            } catch {
                shard.table.withLock { $0[claim.device.rawValue] = .claimed(claim.secretHash) }
                throw error
            }
            shard.table.withLock { $0[claim.device.rawValue] = nil }
        }
    }

    /// Issues a secret to a device that has none and stores it at once (synced), for issuers with no write of their
    /// own to carry the record.
    /// - Returns: the device's token, or nil when the device already has a secret.
    public func claim(_ device: DeviceID, issuedBy: String) throws(AuthError) -> String? {
        guard let claim = try beginClaim(device, issuedBy: issuedBy) else { return nil }
        do {
            try storeClaim(claim)
        } catch {
            finishClaim(claim, stored: false)
            throw error
        }
        finishClaim(claim, stored: true)
        return claim.token
    }

    /// Forgets a device's secret (an operator's reset, when a secret is lost or leaked): the old secret stops working
    /// at once, and the device can be claimed again by its next `RegisterDevice` or first `SaveSettings` — or, with
    /// `issueSecret`, gets a new secret now, returned for the operator to hand over.
    ///
    /// - Throws: `.aborted` while a claim of the device is in progress.
    public func resetDevice(_ device: DeviceID, issueSecret: Bool) throws(AuthError) -> (hadSecret: Bool, token: String?) {
        try writeLock.withLock { _ throws(AuthError) in
            let state = deviceState(device)
            if case .pending? = state {
                throw AuthError(code: .aborted, message: "device '\(device)' is being claimed right now; try again")
            }
            let hadSecret = state != nil
            var token: String?
            if issueSecret {
                let secret = try Self.random(Credential.secretBytes)
                let hash = SecretHash(of: secret)
                let record = DeviceSecretRecord(secretHash: hash, issuedAtMs: clock(), issuedBy: "ResetDevice")
                try put(AuthStorage.deviceKey(device), record.encoded)
                deviceShards[Self.shardIndex(device)].table.withLock { $0[device.rawValue] = .claimed(hash) }
                token = Credential.deviceToken(device: device, secret: secret)
            } else if hadSecret {
                try remove(AuthStorage.deviceKey(device))
                deviceShards[Self.shardIndex(device)].table.withLock { $0[device.rawValue] = nil }
            }
            if hadSecret { invalidated() }
            return (hadSecret, token)
        }
    }

    func deviceState(_ device: DeviceID) -> DeviceState? {
        deviceShards[Self.shardIndex(device)].table.withLock { $0[device.rawValue] }
    }

    // MARK: Storage

    private func put(_ key: [UInt8], _ value: [UInt8]) throws(AuthError) {
        var batch = WriteBatch()
        batch.put(key, value)
        try commit(batch)
    }

    private func remove(_ key: [UInt8]) throws(AuthError) {
        var batch = WriteBatch()
        batch.delete(key)
        try commit(batch)
    }

    /// Makes `batch` durable: first where every node reads it in cluster mode (`replicate(through:)`), then in
    /// this node's store.
    private func commit(_ batch: WriteBatch) throws(AuthError) {
        if let replicator = replicator.withLock({ $0 }) {
            for operation in batch.operations {
                switch operation {
                case .put(let key, let value): try replicator.store(key, value)
                case .delete(let key): try replicator.store(key, nil)
                }
            }
        }
        try commitLocally(batch)
    }

    /// Makes `batch` durable in this node's store: through the journal when there is one, so it is ordered after
    /// every record the journal may replay (see `init`), else as a synced write. With `synced` false it is written
    /// in the same order without waiting for the disk: for records whose store of record is elsewhere (the
    /// cluster's), which a crash cannot lose.
    func commitLocally(_ batch: WriteBatch, synced: Bool = true) throws(AuthError) {
        guard let database else { return }
        do {
            if let journal {
                let sequence = try journal.append(batch)
                if synced { try journal.sync(through: sequence) }
            } else {
                try database.write(batch, sync: synced)
            }
        } catch {
            throw AuthError(code: .storeFailure, message: "cannot store the credential: \(error.message)")
        }
    }

    /// `count` bytes from the system's secure random source.
    static func random(_ count: Int) throws(AuthError) -> [UInt8] {
        do {
            return try SecureRandom.bytes(count)
        } catch {
            throw AuthError(code: .unavailable, message: "cannot make a secret: \(error)")
        }
    }

    static let shardCount = 16

    static func shardIndex(_ device: DeviceID) -> Int {
        var hasher = Hasher()
        hasher.combine(device.rawValue)
        return Int(UInt(bitPattern: hasher.finalize()) % UInt(shardCount))
    }
}

/// A device secret being issued: see `CredentialStore.beginClaim`.
public struct DeviceClaim: Sendable {
    let id: UInt64
    public let device: DeviceID
    /// The token to hand to the caller, once.
    public let token: String
    let secretHash: SecretHash
    /// The record to write with the claiming write.
    public let recordKey: [UInt8]
    public let recordValue: [UInt8]
}
