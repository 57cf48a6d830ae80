import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchStore

extension AlertStorage {
    /// The alert records' steps between schema versions, for `StorageSchema.prepare`.
    static let migrations = [
        StorageSchema.Migration(version: 2) { database throws(StoreError) in _ = try migrateTextArmStates(database) },
    ]

    /// What a migration did.
    struct MigrationReport: Hashable, Sendable {
        /// Devices that got an `alert:arm:` record.
        var devices = 0
        /// Text records that did not parse and were dropped: those sides are computed afresh at load, as schema
        /// version 1 did with them.
        var unreadable = 0
    }

    /// Rewrites schema version 1's per-side text records (`alert:state:<device>\0<symbol>\0<direction>`) as one
    /// binary `alert:arm:<device>` record per device, deleting the text records.
    ///
    /// Each batch holds whole devices: a device's text records are deleted in the batch that writes its binary
    /// record, so a migration cut short (a crash, a full disk) leaves every device in exactly one format, and running
    /// it again finishes the rest. The caller raises the schema version only after this returns.
    static func migrateTextArmStates(_ database: Database, devicesPerBatch: Int = 10_000) throws(StoreError)
        -> MigrationReport
    {
        var report = MigrationReport()
        var batch = WriteBatch()
        var batchDevices = 0
        var currentDevice: [UInt8]?
        var records: [ArmStateRecord] = []

        func finishDevice() {
            guard let device = currentDevice else { return }
            let text = String(decoding: device, as: UTF8.self)
            if !records.isEmpty, let id = try? DeviceID(validating: text), id.rawValue == text {
                batch.put(armKey(id), ArmRecordCoding.encode(records))
                report.devices += 1
            } else {
                report.unreadable += records.count
            }
            records.removeAll(keepingCapacity: true)
            currentDevice = nil
            batchDevices += 1
        }

        do {
            try database.forEach(prefix: statePrefix) { entry in
                let rest = entry.key[statePrefix.count...]
                let device = Array(rest.prefix { $0 != 0 })
                if device != currentDevice {
                    finishDevice()
                    if batchDevices >= devicesPerBatch {
                        try database.write(batch)
                        batch.removeAll(keepingCapacity: true)
                        batchDevices = 0
                    }
                    currentDevice = device
                }
                if let record = decodeTextState(key: entry.key, value: entry.value) {
                    records.append(record)
                } else {
                    report.unreadable += 1
                }
                batch.delete(entry.key)
                return .continue
            }
            finishDevice()
            if !batch.isEmpty {
                try database.write(batch)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(code: .unknown, message: "migrating arm states in \(database.path): \(error)")
        }
        return report
    }
}
