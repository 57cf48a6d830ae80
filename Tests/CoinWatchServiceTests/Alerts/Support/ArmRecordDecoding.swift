import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchStore
@testable import CoinWatchService

/// Every side stored in an `alert:arm:` value, in stored order, or the decoder's error.
func decodeArmRecord(_ value: [UInt8], key: [UInt8], device: DeviceID) throws(StoreError) -> [ArmStateRecord] {
    var symbols = SymbolCache()
    var records: [ArmStateRecord] = []
    let outcome = value.withUnsafeBytes { bytes -> Result<Void, StoreError> in
        do throws(StoreError) {
            try ArmRecordCoding.decode(bytes, key: key, symbols: &symbols) { symbol, direction, threshold, state in
                records.append(
                    ArmStateRecord(device: device, symbol: symbol, direction: direction, threshold: threshold, state: state)
                )
            }
            return .success(())
        } catch {
            return .failure(error)
        }
    }
    try outcome.get()
    return records
}
