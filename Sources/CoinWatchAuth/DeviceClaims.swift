public import CoinWatchLogging
public import CoinWatchModel
public import CoinWatchRPC
import Dispatch

/// The claiming step of the calls that issue device secrets (`SaveSettings`, `RegisterDevice`), run by their
/// handlers after the authoriser allowed the call.
///
/// A device without a secret is claimed by the first such call about it that does not come with a service key
/// (trust on first use): the device itself, registering or saving its first settings. A service acting with a key
/// claims nothing, so an operator's tools never take a device's secret away from it.
///
/// The authoriser let an anonymous caller through because the device had no secret when it checked; two such
/// callers can race, so the handler claims under the store's lock and refuses the caller that lost, when
/// authorisation is required. A call carrying a credential was checked by the authoriser already.
public struct DeviceClaims: Sendable {
    public let credentials: CredentialStore
    public let mode: AuthMode
    /// Where a claim that could not be taken back is reported.
    public let logger: Logger

    public init(credentials: CredentialStore, mode: AuthMode, logger: Logger = Logger(label: "auth", level: .warning)) {
        self.credentials = credentials
        self.mode = mode
        self.logger = logger
    }

    /// Takes back a claim stored with its call's write whose answer, carrying the secret, could not be sent (the
    /// call ended while the write was under way): otherwise the device would keep a secret nobody holds, and with
    /// authorisation required it could not be saved or registered again without an operator's reset. Off the
    /// calling thread, which may be an event loop: the removal is a synced write (and a cluster write).
    public func takeBack(_ claim: DeviceClaim) {
        Self.takeBacks.async { [credentials, logger] in
            do throws(AuthError) {
                try credentials.releaseClaim(claim)
            } catch {
                logger.warning("a device secret whose answer was not sent could not be taken back", [
                    "device": claim.device.rawValue, "reason": error.message,
                ])
            }
        }
    }

    /// Waits for the take-backs queued so far: called before the store closes, so none is lost to it.
    public func finishTakeBacks() {
        Self.takeBacks.sync {}
    }

    /// One serial queue for every take-back: rare, and each blocks on the disk.
    private static let takeBacks = DispatchQueue(label: "coinwatch.claims.take-back")

    /// Begins issuing `device` a secret if it has none and the caller has no service key.
    ///
    /// - Returns: the claim, whose record the handler writes with the call's own write and which it must finish
    ///   (`CredentialStore.finishClaim`) either way; nil when there is nothing to issue.
    /// - Throws: UNAUTHENTICATED when an anonymous caller lost the race for the device (authorisation required);
    ///   UNAVAILABLE when no secret can be made.
    public func claim(_ device: DeviceID, issuedBy: String, context: ServerContext) throws(RPCError) -> DeviceClaim? {
        let isClaimed = credentials.isClaimed(device)
        // Nearly every call is about a device claimed long ago: with authorisation not required there is then nothing
        // to issue or refuse, and the call's credential need not be read.
        if isClaimed && mode != .required { return nil }
        let credential = Self.credentialText(context)
        if !isClaimed && !Self.isServiceKey(credential) {
            let claim: DeviceClaim?
            do {
                claim = try credentials.beginClaim(device, issuedBy: issuedBy)
            } catch {
                throw error.rpcError
            }
            if let claim { return claim }
        }
        if mode == .required && credential.isEmpty {
            throw RPCError(code: .unauthenticated, message: "\(context.method) needs a credential: the device has a secret now")
        }
        return nil
    }

    /// The call's credential as sent (its `authorization` metadata, else the connection's); empty when there is
    /// none, or only spaces.
    static func credentialText(_ context: ServerContext) -> String {
        guard let value = context.bearerTokens.first,
            let token = try? AuthorizationValue.token(in: value, source: .native)
        else { return "" }
        return token
    }

    static func isServiceKey(_ token: String) -> Bool {
        token.utf8.starts(with: Credential.keyPrefix)
    }
}
