import CoinWatchModel

/// Exact decimals from the number text of recorded trades (JSON numbers and CSV fields).
///
/// JSON numbers may carry an exponent (`6.42505e4`), which `ExactDecimal(parsing:)` refuses because a person
/// never types one; exchanges' serializers sometimes write one, so it is applied here, still exactly, by moving the
/// decimal point. (Not to be confused with the CLI's `DecimalDisplay`, which shows wire decimals.)
enum TradeNumber {
    static func exactDecimal(_ text: Substring) throws(DecimalParseError) -> ExactDecimal {
        var digits = text
        var exponent = 0
        // Searched byte by byte: prices are ASCII, and walking characters would break graphemes for nothing.
        if let marker = text.utf8.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            digits = text[..<marker]
            guard let value = Int(text[text.utf8.index(after: marker)...]), abs(value) <= 40 else {
                throw DecimalParseError(text: String(text), reason: "the exponent is not a small whole number")
            }
            exponent = value
        }
        // The common case, no exponent: the digits as they stand.
        if exponent == 0 && digits.endIndex == text.endIndex {
            do {
                return try ExactDecimal(parsing: String(text))
            } catch {
                throw DecimalParseError(text: String(text), reason: error.reason)
            }
        }
        let base: ExactDecimal
        do {
            base = try ExactDecimal(parsing: String(digits))
        } catch {
            throw DecimalParseError(text: String(text), reason: error.reason)
        }
        var mantissa = base.mantissa
        var scale = base.scale - exponent
        while scale < 0 {
            let (next, overflow) = mantissa.multipliedReportingOverflow(by: 10)
            guard !overflow else { throw DecimalParseError(text: String(text), reason: "too large") }
            mantissa = next
            scale += 1
        }
        if mantissa == 0 { return .zero }
        while scale > ExactDecimal.maxScale && mantissa % 10 == 0 {
            mantissa /= 10
            scale -= 1
        }
        guard let value = ExactDecimal(mantissa: mantissa, scale: scale) else {
            throw DecimalParseError(text: String(text), reason: "more than \(ExactDecimal.maxScale) digits after the point")
        }
        return value
    }
}
