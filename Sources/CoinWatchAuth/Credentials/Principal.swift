public import CoinWatchModel

/// Who a call comes from, once its credential has been checked.
public enum Principal: Sendable, Hashable, CustomStringConvertible {
    /// No credential.
    case anonymous
    /// A service key (or the `--publish-token`, which acts as a key with `prices:publish`).
    case key(id: String, scopes: ScopeSet)
    /// A device, by its secret: calls about that device only.
    case device(DeviceID)

    /// For logs: the key id or the device, never a secret.
    public var description: String {
        switch self {
        case .anonymous: "anonymous"
        case .key(let id, _): "key \(id)"
        case .device(let device): "device \(device)"
        }
    }
}
