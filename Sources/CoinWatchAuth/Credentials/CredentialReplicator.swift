/// Where cluster mode keeps the credentials of record (docs/SCALING.md, "Credentials"): every key and device secret
/// one node creates, revokes or resets is stored there before this node's copy changes, and every node applies
/// what the others stored (`CredentialStore.applyReplicated`). Without it, a device claimed on one node would be
/// free to claim on another, and a key revoked on one node would still work on the others.
///
/// Calls come from the Admin service's queue and the settings writer's thread, never from an event loop: the
/// implementation may block on the network.
public protocol CredentialReplicator: Sendable {
    /// Stores the record `value` under the credential store's `key` (`nil`: removed) where every node reads it;
    /// blocks until it is acknowledged.
    func store(_ key: [UInt8], _ value: [UInt8]?) throws(AuthError)

    /// Stores `value` under `key` only if the key holds no record, or already holds this very record (a retry);
    /// `.alreadyClaimed` when another record is there. For a device's first secret, so that of two nodes claiming a
    /// device at once exactly one succeeds.
    func create(_ key: [UInt8], _ value: [UInt8]) throws(AuthError)
}
