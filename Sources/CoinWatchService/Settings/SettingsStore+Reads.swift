public import CoinWatchModel
public import CoinWatchProto
public import CoinWatchRPC
import Synchronization

extension SettingsStore {
    /// The device's committed settings, or `nil` if it has none. Served from memory on the calling thread.
    public func settings(for device: DeviceID) -> V1.Settings? {
        table.get(device.rawValue)
    }

    /// `GetSettings`: validates the device id and answers from memory.
    ///
    /// - Returns: `INVALID_ARGUMENT` for a bad device id, `NOT_FOUND` when the device has no settings.
    public func getSettings(_ request: V1.GetSettingsRequest) -> Result<V1.Settings, RPCError> {
        let device: DeviceID
        do throws(ValidationError) {
            device = try DeviceID(validating: request.deviceID, field: "device_id")
        } catch {
            return .failure(RPCError(code: .invalidArgument, message: error.description))
        }
        guard let settings = settings(for: device) else {
            return .failure(RPCError(code: .notFound, message: "no settings for device '\(device)'"))
        }
        return .success(settings)
    }

    /// `GetSettings` answered with the response bytes encoded when the settings were
    /// published: the event loop's read path is a validation and a lookup.
    public func getSettingsEncoded(_ request: V1.GetSettingsRequest) -> Result<[UInt8], RPCError> {
        let device: DeviceID
        do throws(ValidationError) {
            device = try DeviceID(validating: request.deviceID, field: "device_id")
        } catch {
            return .failure(RPCError(code: .invalidArgument, message: error.description))
        }
        guard let bytes = table.encodedResponse(device.rawValue) else {
            return .failure(RPCError(code: .notFound, message: "no settings for device '\(device)'"))
        }
        return .success(bytes)
    }

    /// `GetSettings` straight from the request's bytes, answered through `respond` with the
    /// response encoded when the settings were published.
    ///
    /// A request of the plain shape (only `device_id`, once, already canonical) is read in
    /// place and looked up without decoding it or copying the response; any other request,
    /// including every invalid one, is decoded and answered as by `getSettingsEncoded(_:)`.
    ///
    /// - Throws: `INVALID_ARGUMENT` for an undecodable request or a bad device id, `NOT_FOUND`
    ///   when the device has no settings.
    public func getSettingsEncoded(
        serializedRequest payload: UnsafeRawBufferPointer, respond: (UnsafeRawBufferPointer) -> Void
    ) throws(RPCError) {
        if let id = Self.plainDeviceID(payload) {
            guard table.withEncodedResponse(id, respond) else {
                let device = String(decoding: id, as: UTF8.self)
                throw RPCError(code: .notFound, message: "no settings for device '\(device)'")
            }
            return
        }
        let request = try RPCMethod.decode(V1.GetSettingsRequest.self, payload)
        try getSettingsEncoded(request).get().withUnsafeBytes(respond)
    }

    /// The device id of a `GetSettingsRequest` encoded as exactly its one field, when that
    /// id is valid and canonical; nil otherwise.
    private static func plainDeviceID(_ payload: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var cursor = ProtobufCursor(payload)
        guard let (field, wireType) = cursor.tag(), field == 1, wireType == 2, let id = cursor.delimited(), cursor.isAtEnd,
              DeviceID.isCanonical(utf8: id) else {
            return nil
        }
        return id
    }

    /// A copy of every device's settings, in no particular order. Changes committed while it runs may or may not be
    /// included; to follow changes from a consistent starting point use `observeChanges(initial:onChange:)`.
    public func allSettings() -> [V1.Settings] {
        table.all()
    }

    /// How many devices have settings.
    public var deviceCount: Int {
        table.count
    }

    /// Registers `onChange` for every change committed from now on, after calling `initial` with every device's
    /// settings as of that moment, so a consumer (the alert engine's index) misses no change and sees none twice.
    ///
    /// No batch is published while `initial` runs, so it should only copy what it needs; it runs on the calling
    /// thread and must not call `observeChanges` again. Handlers stay registered until the store is released.
    public func observeChanges(
        initial: ([V1.Settings]) -> Void,
        onChange: @escaping ChangeHandler
    ) {
        writer.observers.withLock { handlers in
            initial(table.all())
            handlers.append(onChange)
        }
    }
}

extension SettingsStore {
    /// Registers `onChange` for every change committed from now on, after calling `initial` with whether any change
    /// was committed since the store loaded: a consumer that gathered what it needs while the store loaded (the
    /// `onLoadedRule` hook of `init`) takes that when nothing changed, and reads the rules again (`forEachRule`)
    /// otherwise. No batch is published while `initial` runs, so what it reads is current; it runs on the calling
    /// thread.
    func observeChangesSinceLoad(_ initial: (_ changedSinceLoad: Bool) -> Void, onChange: @escaping ChangeHandler) {
        writer.observers.withLock { handlers in
            initial(table.changedSinceLoad.load(ordering: .relaxed))
            handlers.append(onChange)
        }
    }

    /// Calls `visit` with every rule of every device's committed settings, read from the stored records in memory
    /// (a record not in the form `SettingsRecord` reads in place is decoded), one device after another in no
    /// particular order. Holds each shard's lock while it reads the shard, so `visit` must be short.
    func forEachRule(_ visit: (DeviceID, StoredRule) -> Void) {
        var symbols = SymbolCache()
        var rules: [StoredRule] = []
        table.forEachRecord { key, record in
            guard let device = try? DeviceID(validating: key) else { return }
            rules.removeAll(keepingCapacity: true)
            var key = key
            let canonical = key.withUTF8 { id in
                SettingsRecord.scan(record, deviceID: UnsafeRawBufferPointer(id)) { symbolBytes, below, above in
                    if let rule = StoredRule(symbol: symbolBytes, below: below, above: above, symbols: &symbols) {
                        rules.append(rule)
                    }
                }
            }
            if canonical {
                for rule in rules { visit(device, rule) }
            } else if let settings = try? V1.Settings(serializedBytes: record) {
                for rule in StoredRule.rules(of: settings).values { visit(device, rule) }
            }
        }
    }
}
