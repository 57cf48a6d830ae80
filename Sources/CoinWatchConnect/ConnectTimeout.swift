/// `Connect-Timeout-Ms`: the call's deadline, 1 to 10 ASCII digits of milliseconds.
public enum ConnectTimeout {
    /// The timeout in nanoseconds; nil when the value is not 1–10 digits. A timeout of 0 is an immediate
    /// deadline, returned as 1 ns so it stays distinct from "no deadline" (0).
    public static func nanoseconds(_ value: some StringProtocol) -> Int64? {
        let utf8 = value.utf8
        guard (1...10).contains(utf8.count), utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        var milliseconds: Int64 = 0
        for digit in utf8 { milliseconds = milliseconds * 10 + Int64(digit - UInt8(ascii: "0")) }
        return max(milliseconds * 1_000_000, 1)
    }
}
