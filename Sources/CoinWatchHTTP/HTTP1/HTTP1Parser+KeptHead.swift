import CoinWatchCore

extension HTTP1Parser {
    /// A request head the parser accepted, kept whole (request line to the blank line) with what it parsed to, so
    /// that the same head again is recognised by comparing bytes instead of stepping the state machine through it.
    ///
    /// A keep-alive client calling one method sends the same head every time but, perhaps, for the
    /// `Content-Length` value: that value may differ (1 to 12 digits, within the body limit, as the machine
    /// takes it), every other byte must be the same. The head decides the same as it did, so every check the
    /// machine made of it holds again. Only heads framed by one `Content-Length` or by none qualify (no
    /// `Transfer-Encoding`, no `Expect`, whose handling the machine keeps), and only heads of at most `maxBytes`
    /// that arrived in one read.
    final class KeptHead {
        static let maxBytes = 1024

        private(set) var bytes: [UInt8] = []
        /// Where the `Content-Length` value's digits are in `bytes`, and its field's index in `headers`; nil for a
        /// head without a body.
        private(set) var length: (digits: Range<Int>, field: Int)?
        private(set) var method = ""
        private(set) var target = RequestTarget("")
        private(set) var minorVersion = 1
        private(set) var headers: [(name: String, value: String)] = []

        init() {}

        /// What the head counted against `Limits.maxHeaderBytes`.
        private var headerBytes = 0

        /// Keeps `head`, which parsed to the other arguments, when it qualifies (storage is reused); when it does
        /// not, nothing is kept.
        func keep(
            _ head: UnsafeRawBufferPointer, method: String, target: String, minorVersion: Int,
            headers: [(name: String, value: String)], headerBytes: Int
        ) {
            guard head.count <= Self.maxBytes, let length = Self.lengthDigits(in: head, headers: headers) else {
                bytes.removeAll(keepingCapacity: true)
                return
            }
            bytes.removeAll(keepingCapacity: true)
            bytes.append(contentsOf: head)
            self.length = length
            self.method = method
            if self.target.text != target { self.target = RequestTarget(target) }
            self.minorVersion = minorVersion
            self.headers.removeAll(keepingCapacity: true)
            self.headers.append(contentsOf: headers)
            self.headerBytes = headerBytes
        }

        /// When `input` begins with the kept head, the head's length in `input` and its `Content-Length` digits
        /// (nil for a head without a body). A body or a field section that other digits would take past `limits`
        /// is left to the machine to refuse.
        func match(_ input: UnsafeRawBufferPointer, limits: Limits) -> (count: Int, digits: UnsafeRawBufferPointer?)? {
            guard !bytes.isEmpty, input.count >= bytes.count - 11 else { return nil }
            return bytes.withUnsafeBytes { kept -> (count: Int, digits: UnsafeRawBufferPointer?)? in
                guard let length else {
                    guard input.count >= kept.count,
                          UnsafeRawBufferPointer(rebasing: input[..<kept.count]).hasSameBytes(as: kept) else { return nil }
                    return (kept.count, nil)
                }
                // The input may end before the digits (a request's start, the rest still to come).
                let start = length.digits.lowerBound
                guard input.count > start, UnsafeRawBufferPointer(rebasing: input[..<start])
                    .hasSameBytes(as: UnsafeRawBufferPointer(rebasing: kept[..<start])) else { return nil }
                var end = start
                var value = 0
                while end < input.count && end - start < 12, input[end] >= 0x30 && input[end] <= 0x39 {
                    value = value * 10 + Int(input[end] - 0x30)
                    end += 1
                }
                let rest = kept.count - length.digits.upperBound
                let grown = (end - start) - length.digits.count
                guard end > start, value <= limits.maxBodyBytes, headerBytes + grown <= limits.maxHeaderBytes,
                      input.count - end >= rest,
                      UnsafeRawBufferPointer(rebasing: input[end..<(end + rest)])
                        .hasSameBytes(as: UnsafeRawBufferPointer(rebasing: kept[length.digits.upperBound...]))
                else { return nil }
                return (end + rest, UnsafeRawBufferPointer(rebasing: input[start..<end]))
            }
        }

        /// Where the one `Content-Length` value lies in `head`, found by its field's index (its line is that index
        /// plus one: the machine refuses folded lines). nil when the head does not qualify; `.some(nil)` when it
        /// qualifies without a body.
        private static func lengthDigits(
            in head: UnsafeRawBufferPointer, headers: [(name: String, value: String)]
        ) -> (digits: Range<Int>, field: Int)?? {
            var field: Int?
            for (index, header) in headers.enumerated() {
                switch header.name {
                case "content-length":
                    guard field == nil else { return nil }
                    field = index
                case "transfer-encoding", "expect":
                    return nil
                default:
                    break
                }
            }
            guard let field else { return .some(nil) }
            // The start of line `field + 1`, then the value after the colon and its optional whitespace.
            var line = 0
            var position = 0
            while line < field + 1 {
                guard let lf = head[position...].firstIndex(of: 0x0a) else { return nil }
                position = lf + 1
                line += 1
            }
            guard let colon = head[position...].firstIndex(of: 0x3a) else { return nil }
            var start = colon + 1
            while start < head.count && (head[start] == 0x20 || head[start] == 0x09) { start += 1 }
            let value = headers[field].value.utf8
            let end = start + value.count
            guard end < head.count, head[start..<end].elementsEqual(value), head[end] < 0x30 || head[end] > 0x39 else {
                return nil
            }
            return .some((start..<end, field))
        }
    }
}
