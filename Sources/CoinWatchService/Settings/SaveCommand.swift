import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// A `SaveSettingsRequest` that passed every check not needing the stored state, in canonical form.
///
/// Built on the caller's thread so the single writer spends its time only on what must be serialised: the
/// `expected_version` check, the patch and the symbol limit, which all depend on the current settings.
struct SaveCommand: Sendable {
    /// The most symbols one device may have rules for, counted after the patch.
    static let maxSymbols = 64

    let device: DeviceID
    /// The rules to set, by canonical symbol. `nil` means both sides are off: the symbol is dropped.
    let setRules: [(symbol: Symbol, rule: V1.AlertRule?)]
    /// Canonical symbols to drop; may repeat (removing twice is harmless).
    let removeSymbols: [String]
    let expectedVersion: UInt64?
    /// A record written in the same batch as the settings when this save succeeds, and not at all when it fails:
    /// the secret a device's first save issues (`DeviceClaims`), durable exactly when the save is.
    var attachedWrite: (key: [UInt8], value: [UInt8])?
    /// The call asking for the save, when it came through a method: a save whose call has ended (cancelled, past
    /// its deadline, its connection gone) before the writer takes it is not written.
    var call: ServerContext?

    /// The call this save is for has ended, so nobody will read its answer.
    var isAbandoned: Bool { call?.isCancelled ?? false }

    /// Validates and normalises `request`.
    ///
    /// - Throws: `INVALID_ARGUMENT` naming the first offending field and the rule it breaks. Fields are checked in
    ///   a fixed order (device id, `set_rules` in key order, then `remove_symbols` in list order), so the same
    ///   request always gets the same message.
    init(validating request: V1.SaveSettingsRequest) throws(RPCError) {
        do throws(ValidationError) {
            device = try DeviceID(validating: request.deviceID, field: "device_id")
            var setRules: [(symbol: Symbol, rule: V1.AlertRule?)] = []
            setRules.reserveCapacity(request.setRules.count)
            var rawKeyBySymbol = [String: String](minimumCapacity: request.setRules.count)
            // Sorted by UTF-8 bytes so that the first error reported does not depend on hashing.
            let keys = request.setRules.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for key in keys {
                let symbol = try Symbol(validating: key, field: "set_rules key")
                if let earlier = rawKeyBySymbol.updateValue(key, forKey: symbol.rawValue) {
                    throw ValidationError(
                        field: "set_rules",
                        rule: "keys '\(earlier)' and '\(key)' both name \(symbol); give each symbol once"
                    )
                }
                // The key came from the map, so the lookup cannot fail.
                let rule = request.setRules[key] ?? V1.AlertRule()
                setRules.append((symbol, try Self.normalise(rule, field: "set_rules[\(symbol)]")))
            }
            var removeSymbols: [String] = []
            removeSymbols.reserveCapacity(request.removeSymbols.count)
            for (index, text) in request.removeSymbols.enumerated() {
                let field = "remove_symbols[\(index)]"
                let symbol = try Symbol(validating: text, field: field).rawValue
                if rawKeyBySymbol[symbol] != nil {
                    throw ValidationError(
                        field: field, rule: "\(symbol) is also in set_rules; a symbol may not be both set and removed"
                    )
                }
                removeSymbols.append(symbol)
            }
            // Every rule that is not all-off will be present after the patch, so this many is a floor; checking
            // it here spares the writer a hopeless request. The exact count is checked when the patch is applied.
            let settingCount = setRules.count { $0.rule != nil }
            if settingCount > Self.maxSymbols {
                throw ValidationError(
                    field: "set_rules",
                    rule: "a device may have at most \(Self.maxSymbols) symbols (this save sets \(settingCount))"
                )
            }
            self.setRules = setRules
            self.removeSymbols = removeSymbols
        } catch {
            throw RPCError(code: .invalidArgument, message: error.description)
        }
        switch request.precondition {
        case .expectedVersion(let version)?: expectedVersion = version
        case nil: expectedVersion = nil
        }
    }

    /// The error for a save that would leave a device with `count` symbols.
    static func tooManySymbols(_ count: Int) -> ValidationError {
        ValidationError(
            field: "set_rules",
            rule: "a device may have at most \(maxSymbols) symbols (this save would leave it with \(count))"
        )
    }

    /// Checks a rule and puts it in the stored form: each side canonical (smallest scale) or absent when off, and
    /// `nil` when both sides are off, since "0 = off" and an all-off rule alerts on nothing. `field` names the rule
    /// in an error; it is built only then, since this runs for every rule of every save.
    static func normalise(
        _ rule: V1.AlertRule, field: @autoclosure () -> String
    ) throws(ValidationError) -> V1.AlertRule? {
        let below = try threshold(rule.below, field: field() + ".below")
        let above = try threshold(rule.above, field: field() + ".above")
        if let below, let above, below >= above {
            throw ValidationError(field: field(), rule: "below (\(below)) must be less than above (\(above))")
        }
        guard below != nil || above != nil else {
            return nil
        }
        return V1.AlertRule(below: below.map(V1.Decimal.init), above: above.map(V1.Decimal.init))
    }

    /// One side of a rule as an exact decimal; `nil` when it is off (absent or zero).
    private static func threshold(
        _ value: V1.Decimal?, field: @autoclosure () -> String
    ) throws(ValidationError) -> ExactDecimal? {
        guard let value else {
            return nil
        }
        let decimal = try ExactDecimal(validating: value, field: field())
        guard !decimal.isNegative else {
            throw ValidationError(field: field(), rule: "must not be negative (got \(decimal))")
        }
        return decimal.isZero ? nil : decimal
    }
}

extension SaveCommand {
    /// The settings after this save, given the current ones; runs on the writer thread, in queue order.
    ///
    /// - Returns: `ABORTED` when `expected_version` does not match, `INVALID_ARGUMENT` when the patch would leave
    ///   more than `maxSymbols` symbols.
    func apply(to current: V1.Settings?, nowMs: Int64) -> Result<V1.Settings, RPCError> {
        let currentVersion = current?.version ?? 0
        if let expectedVersion, expectedVersion != currentVersion {
            return .failure(.versionMismatch(expected: expectedVersion, device: device, current: current))
        }
        guard currentVersion < UInt64.max else {
            return .failure(RPCError(code: .internal, message: "device '\(device)' has exhausted its version counter"))
        }
        var rules = current?.rules ?? [:]
        for symbol in removeSymbols {
            rules[symbol] = nil
        }
        for (symbol, rule) in setRules {
            rules[symbol.rawValue] = rule
        }
        if rules.count > Self.maxSymbols {
            return .failure(RPCError(code: .invalidArgument, message: Self.tooManySymbols(rules.count).description))
        }
        return .success(
            V1.Settings(deviceID: device.rawValue, rules: rules, version: currentVersion + 1, updatedAtMs: nowMs)
        )
    }
}

extension RPCError {
    /// `ABORTED` for a failed `expected_version` check, naming the version the device is really at.
    static func versionMismatch(expected: UInt64, device: DeviceID, current: V1.Settings?) -> RPCError {
        let state = current.map { "is at version \($0.version)" } ?? "has no settings"
        return RPCError(code: .aborted, message: "expected version \(expected) but device '\(device)' \(state)")
    }
}
