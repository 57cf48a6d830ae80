public import CoinWatchModel
public import CoinWatchProto

/// One committed save or delete that changed a device's settings, as observers of the store see it.
public struct SettingsChange: Sendable {
    public let device: DeviceID
    /// `nil` for a device's first save.
    public let old: V1.Settings?
    /// `nil` for a delete.
    public let new: V1.Settings?

    public init(device: DeviceID, old: V1.Settings?, new: V1.Settings?) {
        self.device = device
        self.old = old
        self.new = new
    }
}
