import CoinWatchCommandLine
import CoinWatchModel

/// Typed readers for the positionals and option values of commands, each failing with a usage error
/// that says which argument is wrong and why.
enum ArgumentReaders {
    /// Exactly `names.count` positionals, named in the message when some are missing or extra.
    static func exactly(_ names: [String], in parsed: ParsedArguments) throws(UsageError) -> [String] {
        let positionals = parsed.positionals
        if positionals.count < names.count {
            throw UsageError("missing \(names[positionals.count...].joined(separator: " "))")
        }
        if positionals.count > names.count {
            throw UsageError("unexpected argument '\(positionals[names.count])'")
        }
        return positionals
    }

    /// A device id, validated by the same rules as the server's.
    static func device(_ text: String) throws(UsageError) -> String {
        do {
            return try DeviceID(validating: text, field: "DEVICE").rawValue
        } catch {
            throw UsageError(error.description)
        }
    }

    /// An APNs device token, lowercased as the server stores it.
    static func pushToken(_ text: String) throws(UsageError) -> String {
        do {
            return try PushToken(validating: text, field: "TOKEN").rawValue
        } catch {
            throw UsageError(error.description)
        }
    }

    /// A symbol, upper-cased as the server stores it.
    static func symbol(_ text: String) throws(UsageError) -> String {
        do {
            return try Symbol(validating: text, field: "SYMBOL").rawValue
        } catch {
            throw UsageError(error.description)
        }
    }

    /// An exact decimal price; `what` names the argument in the message (`--below`, `PRICE`).
    static func price(_ text: String, _ what: String) throws(UsageError) -> ExactDecimal {
        let value: ExactDecimal
        do {
            value = try ExactDecimal(parsing: text)
        } catch {
            throw UsageError("\(what): \(error.description)")
        }
        guard !value.isNegative else { throw UsageError("\(what): a price cannot be negative (got \(text))") }
        return value
    }

    /// `--expect-version N`, if given.
    static func expectedVersion(_ parsed: ParsedArguments) throws(UsageError) -> UInt64? {
        try parsed.value("expect-version", as: "a version number (0 or more)") { UInt64($0) }
    }
}
