/// The release of CoinWatch this build belongs to, shown by `--version` and
/// sent in the handshake so logs on both sides name what talked to what.
public enum CoinWatchVersion {
    public static let current = "0.1.0"
}
