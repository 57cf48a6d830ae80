import CoinWatchCore
import CoinWatchModel
import CoinWatchProto

/// Field readers shared by the adapters, over the values a `JSONReader` hands out (nil for a field the
/// message does not have). A trade's fields (price, instrument, numbers, times) are read from the message's bytes:
/// only an error, a string with an escape or an instrument not subscribed to makes a `String`.
enum VenueFields {
    typealias Token = JSONReader.Token
    typealias Reader = JSONReader
    typealias SyntaxError = JSONSyntaxError

    /// Reads a whole message that must be a JSON object: `member` gets each of its members (and must read or
    /// skip the value). A syntax error anywhere in the message comes first, so readers throw nothing else until
    /// the message has been read to its end. Returns the object, for `describe`.
    static func object(
        _ message: UnsafeRawBufferPointer, _ member: (inout Reader, JSONReader.Text) throws(SyntaxError) -> Void
    ) throws(VenueParseError) -> JSONReader.Nested {
        let token: Token
        do {
            token = try TradeJSON.read(message) { (reader) throws(SyntaxError) in try reader.object(member) }
        } catch {
            throw VenueParseError(error.description)
        }
        guard case .object(let object) = token else { throw VenueParseError("expected a JSON object") }
        return object
    }

    /// A positive exact price from a number or a quoted number.
    static func price(_ value: Token?, _ field: String) throws(VenueParseError) -> ExactDecimal {
        let parsed = value?.withNumberText { text in
            Result { () throws(DecimalParseError) in try TradeNumber.exactDecimal(text) }
        }
        guard let parsed else { throw VenueParseError("missing \"\(field)\" (price)") }
        let price: ExactDecimal
        do {
            price = try parsed.get()
        } catch {
            throw VenueParseError("price \(error.description)")
        }
        // A canonical decimal's sign is its mantissa's: no aligning of two decimals per trade.
        guard price.mantissa > 0 else { throw VenueParseError("price must be greater than 0 (got \(price))") }
        return price
    }

    /// An instrument's name: a subscribed one is the subscribed `String` itself.
    static func instrument(
        _ value: Token?, _ field: String, _ instruments: VenueInstruments
    ) throws(VenueParseError) -> String {
        guard let text = value?.text, !text.isEmpty else { throw VenueParseError("missing \"\(field)\"") }
        return text.escaped ? text.string : instruments.name(text.bytes)
    }

    /// A whole number ≥ 0 (a trade id, a sequence), from a number or a quoted number; nil when absent or null.
    static func number(_ value: Token?, _ field: String) throws(VenueParseError) -> UInt64? {
        guard let value else { return nil }
        if case .null = value { return nil }
        guard let number = value.withNumberText({ TradeNumber.integer($0, as: UInt64.self) }) ?? nil else {
            throw VenueParseError("\"\(field)\" is not a whole number ≥ 0")
        }
        return number
    }

    /// Milliseconds since the epoch from a number; nil when absent.
    static func epochMilliseconds(_ value: Token?, _ field: String) throws(VenueParseError) -> Int64? {
        guard let value else { return nil }
        guard let number = value.withNumberText({ TradeNumber.integer($0, as: Int64.self) }) ?? nil, number >= 0 else {
            throw VenueParseError("\"\(field)\" '\(value.numberText ?? "?")' is not whole milliseconds since the epoch")
        }
        return number
    }

    /// Milliseconds since the epoch from an RFC 3339 time stamp; nil when absent.
    static func timestamp(_ value: Token?, _ field: String) throws(VenueParseError) -> Int64? {
        guard let value else { return nil }
        guard let ms = value.text?.withUTF8({ WallClock.milliseconds(rfc3339UTF8: $0) }) ?? nil else {
            throw VenueParseError("\"\(field)\" is not an RFC 3339 time")
        }
        return ms
    }

    /// A string's text; nil for any other value.
    static func string(_ value: Token?) -> String? {
        value?.text?.string
    }

    /// The last member named `key` of an object (nil when the value is no object): for the few nested fields
    /// read off the hot path (an error's code, an acknowledgement's symbol), which read the object again.
    static func member(_ key: StaticString, of value: Token?) -> Token? {
        guard case .object(let object)? = value else { return nil }
        var reader = object.reader()
        var found: Token?
        // Read before, so it cannot fail.
        _ = try? reader.object { (reader, name) throws(SyntaxError) in
            if name == key { found = try reader.token() } else { try reader.skip() }
        }
        return found
    }

    /// A short description of an unexpected message, for a log line (never the whole message).
    static func describe(_ object: JSONReader.Nested) -> String {
        var reader = object.reader()
        var keys: [String] = []
        var count = 0
        _ = try? reader.object { (reader, key) throws(SyntaxError) in
            if count < 6 { keys.append(key.string) }
            count += 1
            try reader.skip()
        }
        return "a message with keys \(keys.joined(separator: ","))\(count > 6 ? ",…" : "")"
    }
}
