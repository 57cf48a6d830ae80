import CoinWatchModel
import CoinWatchProto
import CoinWatchStore

/// Push delivery's records in LevelDB (see docs/STORAGE.md):
///
/// | key | value |
/// |---|---|
/// | `push:device:<device>` | serialized `coinwatch.v1.DeviceRegistration`: token, environment, topic, locale and delivery state |
///
/// Written only by the alert thread, in the batch of the round that changed them (synced when the round holds a
/// registration a caller waits for).
enum PushStorage {
    static let devicePrefix = StorageLayout.pushPrefix + Array("device:".utf8)

    static func deviceKey(_ device: DeviceID) -> [UInt8] { devicePrefix + Array(device.rawValue.utf8) }

    /// What a load read back.
    struct Loaded {
        var registrations: [DeviceID: V1.DeviceRegistration] = [:]
        /// Records skipped because their key or value does not read; the device then counts as not registered.
        var unreadable: [String] = []
    }

    /// Every registration.
    static func load(_ database: Database) throws -> Loaded {
        var loaded = Loaded()
        for entry in try database.scan(prefix: devicePrefix) {
            let keyText = String(decoding: entry.key.dropFirst(devicePrefix.count), as: UTF8.self)
            guard let device = try? DeviceID(validating: keyText), device.rawValue == keyText else {
                loaded.unreadable.append("record 'push:device:\(keyText)': the key is not a canonical device id")
                continue
            }
            do {
                let registration = try V1.DeviceRegistration(serializedBytes: entry.value)
                guard registration.deviceID == device.rawValue, (try? PushToken(validating: registration.apnsToken))?
                    .rawValue == registration.apnsToken
                else {
                    loaded.unreadable.append("record 'push:device:\(keyText)': its device id or token does not match")
                    continue
                }
                loaded.registrations[device] = registration
            } catch {
                loaded.unreadable.append("record 'push:device:\(keyText)': \(error)")
            }
        }
        return loaded
    }
}
