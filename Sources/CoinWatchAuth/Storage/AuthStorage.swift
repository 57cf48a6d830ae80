import CoinWatchModel
import CoinWatchProto
import CoinWatchStore

/// The credential store's records in LevelDB (described in `docs/STORAGE.md`).
///
/// - `auth:key:<id>` → `coinwatch.v1.StoredServiceKey`: a service key's description and its secret's SHA-256.
/// - `auth:device:<canonical device id>` → `coinwatch.v1.StoredDeviceSecret`: the SHA-256 of the device's secret.
///
/// Secrets themselves are never stored. The `auth:` prefix is listed with the others in the settings store's
/// `StorageLayout`; nothing else reads or writes it.
enum AuthStorage {
    static let prefix: [UInt8] = Array("auth:".utf8)
    static let keyPrefix: [UInt8] = Array("auth:key:".utf8)
    static let devicePrefix: [UInt8] = Array("auth:device:".utf8)

    static func keyKey(_ id: String) -> [UInt8] { keyPrefix + Array(id.utf8) }

    static func deviceKey(_ device: DeviceID) -> [UInt8] { devicePrefix + Array(device.rawValue.utf8) }

    /// Every stored key and device secret, read at start (a few records per key, one per claimed device).
    ///
    /// - Throws: `AuthError.corruption` for a record that does not decode or whose key and value disagree: a store
    ///   that silently dropped a device's secret would let anyone claim the device again.
    static func load(_ database: Database) throws(AuthError) -> (keys: [StoredKey], devices: [(DeviceID, DeviceSecretRecord)]) {
        var keys: [StoredKey] = []
        var devices: [(DeviceID, DeviceSecretRecord)] = []
        do {
            try database.forEach(prefix: keyPrefix) { entry in
                keys.append(try StoredKey(key: entry.key, value: entry.value))
                return .continue
            }
            try database.forEach(prefix: devicePrefix) { entry in
                devices.append(try DeviceSecretRecord.decode(key: entry.key, value: entry.value))
                return .continue
            }
        } catch let error as AuthError {
            throw error
        } catch let error as StoreError {
            throw AuthError(code: .storeFailure, message: "cannot read the credential store: \(error.message)")
        } catch {
            throw AuthError(code: .storeFailure, message: "cannot read the credential store: \(error)")
        }
        return (keys, devices)
    }

    static func describe(_ key: [UInt8]) -> String {
        String(decoding: key.map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}

/// A service key as stored: its description and the hash of its secret.
struct StoredKey: Sendable {
    var key: V1.ServiceKey
    var secretHash: SecretHash
    let scopes: ScopeSet

    init(key: V1.ServiceKey, secretHash: SecretHash, scopes: ScopeSet) {
        self.key = key
        self.secretHash = secretHash
        self.scopes = scopes
    }

    /// Decodes `auth:key:<id>`.
    init(key recordKey: [UInt8], value: [UInt8]) throws(AuthError) {
        let name = AuthStorage.describe(recordKey)
        let record: V1.StoredServiceKey
        do {
            record = try V1.StoredServiceKey(serializedBytes: value, maxBytes: 1 << 16)
        } catch {
            throw AuthError(code: .corruption, message: "record '\(name)' does not decode: \(error.message)")
        }
        guard AuthStorage.keyKey(record.id) == recordKey else {
            throw AuthError(code: .corruption, message: "record '\(name)' names another key ('\(record.id)')")
        }
        guard let hash = SecretHash(bytes: record.secretSha256) else {
            throw AuthError(code: .corruption, message: "record '\(name)' has a hash of \(record.secretSha256.count) bytes, not 32")
        }
        do {
            scopes = try ScopeSet(names: record.scopes)
        } catch {
            throw AuthError(code: .corruption, message: "record '\(name)': \(error.message)")
        }
        key = V1.ServiceKey(
            id: record.id, name: record.name, scopes: scopes.names, createdAtMs: record.createdAtMs,
            revoked: record.revokedAtMs != 0, revokedAtMs: record.revokedAtMs)
        secretHash = hash
    }

    var encoded: [UInt8] {
        V1.StoredServiceKey(
            id: key.id, name: key.name, scopes: key.scopes, createdAtMs: key.createdAtMs, revokedAtMs: key.revokedAtMs,
            secretSha256: secretHash.bytes
        ).serializedBytes()
    }
}

/// A device's secret as stored: the hash, and when and how it was issued.
struct DeviceSecretRecord: Sendable {
    var secretHash: SecretHash
    var issuedAtMs: Int64
    var issuedBy: String

    var encoded: [UInt8] {
        V1.StoredDeviceSecret(secretSha256: secretHash.bytes, issuedAtMs: issuedAtMs, issuedBy: issuedBy).serializedBytes()
    }

    /// The device that `auth:device:<device>` names.
    static func device(key: [UInt8]) throws(AuthError) -> DeviceID {
        let text = String(decoding: key.dropFirst(AuthStorage.devicePrefix.count), as: UTF8.self)
        guard key.starts(with: AuthStorage.devicePrefix), let device = try? DeviceID(validating: text),
            device.rawValue == text
        else {
            throw AuthError(
                code: .corruption,
                message: "record '\(AuthStorage.describe(key))': the key is not a canonical device id")
        }
        return device
    }

    /// Decodes `auth:device:<device>`.
    static func decode(key: [UInt8], value: [UInt8]) throws(AuthError) -> (DeviceID, DeviceSecretRecord) {
        let name = AuthStorage.describe(key)
        let device = try device(key: key)
        let record: V1.StoredDeviceSecret
        do {
            record = try V1.StoredDeviceSecret(serializedBytes: value, maxBytes: 1 << 16)
        } catch {
            throw AuthError(code: .corruption, message: "record '\(name)' does not decode: \(error.message)")
        }
        guard let hash = SecretHash(bytes: record.secretSha256) else {
            throw AuthError(code: .corruption, message: "record '\(name)' has a hash of \(record.secretSha256.count) bytes, not 32")
        }
        return (device, DeviceSecretRecord(secretHash: hash, issuedAtMs: record.issuedAtMs, issuedBy: record.issuedBy))
    }
}
