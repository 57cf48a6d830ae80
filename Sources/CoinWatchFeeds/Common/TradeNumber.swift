import CoinWatchModel

/// Exact decimals and whole numbers from the number text of recorded trades (JSON numbers, quoted numbers and CSV
/// fields), read from their UTF-8 bytes: a venue message's price goes from its bytes into an `ExactDecimal` without
/// a `String` in between.
///
/// JSON numbers may carry an exponent (`6.42505e4`), which `ExactDecimal(parsing:)` refuses because a person
/// never types one; exchanges' serializers sometimes write one, so it is applied here, still exactly, by moving the
/// decimal point. (Not to be confused with the CLI's `DecimalDisplay`, which shows wire decimals.)
enum TradeNumber {
    static func exactDecimal(_ text: Substring) throws(DecimalParseError) -> ExactDecimal {
        var text = text
        let parsed = text.withUTF8 { utf8 in
            Result { () throws(DecimalParseError) in try exactDecimal(UnsafeRawBufferPointer(utf8)) }
        }
        return try parsed.get()
    }

    static func exactDecimal(_ text: UnsafeRawBufferPointer) throws(DecimalParseError) -> ExactDecimal {
        // Prices are ASCII: the exponent marker is found byte by byte.
        var marker = 0
        while marker < text.count, text[marker] != UInt8(ascii: "e"), text[marker] != UInt8(ascii: "E") {
            marker += 1
        }
        guard marker < text.count else {
            // The common case, no exponent: the digits as they stand.
            return try ExactDecimal(parsingUTF8: text)
        }
        func problem(_ reason: String) -> DecimalParseError {
            DecimalParseError(text: String(decoding: text, as: UTF8.self), reason: reason)
        }
        // `magnitude`, not `abs`: the exponent of `1e-9223372036854775808` has no positive counterpart.
        guard let exponent = integer(UnsafeRawBufferPointer(rebasing: text[(marker + 1)...]), as: Int.self),
              exponent.magnitude <= 40
        else {
            throw problem("the exponent is not a small whole number")
        }
        let base: ExactDecimal
        do {
            base = try ExactDecimal(parsingUTF8: UnsafeRawBufferPointer(rebasing: text[..<marker]))
        } catch {
            throw problem(error.reason)
        }
        var mantissa = base.mantissa
        var scale = base.scale - exponent
        while scale < 0 {
            let (next, overflow) = mantissa.multipliedReportingOverflow(by: 10)
            guard !overflow else { throw problem("too large") }
            mantissa = next
            scale += 1
        }
        if mantissa == 0 { return .zero }
        while scale > ExactDecimal.maxScale && mantissa % 10 == 0 {
            mantissa /= 10
            scale -= 1
        }
        guard let value = ExactDecimal(mantissa: mantissa, scale: scale) else {
            throw problem("more than \(ExactDecimal.maxScale) digits after the point")
        }
        return value
    }

    /// A whole number from its ASCII digits, read as the standard library reads one from text (`Int64("…")`): an
    /// optional sign, then digits only; nil when out of range. So `-0` is a `UInt64`, `+5` is 5, `1.0` is nothing.
    static func integer<T: FixedWidthInteger>(_ text: UnsafeRawBufferPointer, as _: T.Type = T.self) -> T? {
        var index = 0
        var negative = false
        if !text.isEmpty, text[0] == UInt8(ascii: "-") || text[0] == UInt8(ascii: "+") {
            negative = text[0] == UInt8(ascii: "-")
            index = 1
        }
        guard index < text.count else { return nil }
        // The common case, a venue's time stamp or trade id: up to 18 digits, which a 64-bit integer holds whatever
        // they are, so they are added up without an overflow check per digit.
        if T.bitWidth >= 64, text.count - index <= 18 {
            var magnitude: UInt64 = 0
            for offset in index..<text.count {
                let digit = text[offset] &- UInt8(ascii: "0")
                guard digit <= 9 else { return nil }
                magnitude = magnitude &* 10 &+ UInt64(digit)
            }
            guard negative else { return T(exactly: magnitude) }
            return magnitude == 0 ? 0 : T.isSigned ? T(exactly: -Int64(magnitude)) : nil
        }
        var value: T = 0
        while index < text.count {
            let byte = text[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = T(byte &- UInt8(ascii: "0"))
            // Negative numbers are built downwards, so the most negative value fits (and an unsigned one takes
            // only zero).
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            guard !o1, !o2 else { return nil }
            value = next
            index += 1
        }
        return value
    }
}
