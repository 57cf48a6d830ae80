import CoinWatchModel

/// Parses a decimal literal that the test itself spells out; a typo is a test bug, so it traps.
func dec(_ text: String) -> ExactDecimal {
    guard let value = ExactDecimal(text) else { preconditionFailure("bad decimal literal \(text)") }
    return value
}

func device(_ text: String) -> DeviceID {
    guard let value = try? DeviceID(validating: text) else { preconditionFailure("bad device literal \(text)") }
    return value
}

func symbol(_ text: String) -> Symbol {
    guard let value = try? Symbol(validating: text) else { preconditionFailure("bad symbol literal \(text)") }
    return value
}
