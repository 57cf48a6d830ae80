import CoinWatchModel
import CoinWatchProto

/// Every generated case is reproducible from its seed.
typealias SeededGenerator = SplitMix64

/// A message whose random instances the generated test code can build.
protocol RandomMessage: JSONMessage {
    /// The number of cases of the message's largest oneof; 0 without oneofs.
    static var oneofCaseCount: Int { get }

    /// A random instance. `filled` sets every field (and nested field) to a non-default value; `oneofCase`
    /// forces the case of each oneof (modulo its case count).
    static func random(using g: inout RandomValues, filled: Bool, oneofCase: Int?, depth: Int) -> Self
}

extension RandomMessage {
    static func random(using g: inout RandomValues, filled: Bool, depth: Int) -> Self {
        random(using: &g, filled: filled, oneofCase: nil, depth: depth)
    }

    /// One filled instance per oneof case (one instance without oneofs).
    static func filledSamples(using g: inout RandomValues) -> [Self] {
        (0..<max(oneofCaseCount, 1)).map { random(using: &g, filled: true, oneofCase: $0, depth: 0) }
    }
}

/// Field values biased towards edges: zero, extremes, -1, multi-byte UTF-8, empty and absent.
struct RandomValues {
    var rng: SeededGenerator

    init(seed: UInt64) {
        rng = SeededGenerator(seed: seed)
    }

    /// Characters of 1 to 4 UTF-8 bytes, control characters and quotes; no NUL and no combining marks (which
    /// would make distinct map keys compare equal as Swift strings).
    static let characters: [Character] = [
        "a", "Z", "0", " ", "-", "_", "/", ".", "\"", "\\", "'", "\t", "\n", "\u{1}", "\u{7F}",
        "é", "ß", "Ж", "€", "中", "ｱ", "😀", "𝄞",
    ]

    /// `json` with one to four bytes replaced, removed or inserted, the inserted ones drawn from JSON's
    /// punctuation, digits, literals and a few bytes that are not UTF-8 text.
    mutating func mutatedJSON(_ json: [UInt8]) -> [UInt8] {
        let interesting: [UInt8] = Array(#"{}[]",:\-0123456789.eE+nulltruefalse"#.utf8) + [0x00, 0x80, 0xC3, 0xFF, 0x20]
        var mutated = json
        for _ in 0...int(in: 0...3) where !mutated.isEmpty {
            let at = int(in: 0...mutated.count - 1)
            switch int(in: 0...2) {
            case 0: mutated[at] = interesting[int(in: 0...interesting.count - 1)]
            case 1: mutated.remove(at: at)
            default: mutated.insert(interesting[int(in: 0...interesting.count - 1)], at: at)
            }
        }
        return mutated
    }

    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &rng)
    }

    mutating func integer<T: FixedWidthInteger>(filled: Bool) -> T {
        let value: T
        switch int(in: 0...7) {
        case 0: value = 0
        case 1: value = T.max
        case 2: value = T.isSigned ? T.min : 1
        case 3: value = T.isSigned ? 0 &- 1 : 127
        case 4: value = T(truncatingIfNeeded: int(in: -300...300))
        default: value = T(truncatingIfNeeded: rng.next() >> UInt64(int(in: 0...63)))
        }
        return filled && value == 0 ? 1 : value
    }

    mutating func bool(filled: Bool) -> Bool {
        filled || Bool.random(using: &rng)
    }

    mutating func string(filled: Bool) -> String {
        let count = int(in: (filled ? 1 : 0)...10)
        var string = ""
        for _ in 0..<count {
            string.append(Self.characters[int(in: 0...Self.characters.count - 1)])
        }
        return string
    }

    mutating func bytes(filled: Bool) -> [UInt8] {
        let count = int(in: (filled ? 1 : 0)...16)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    /// A named value mostly; now and then a number the schema does not name (negative ones included).
    mutating func enumValue<E: RawRepresentable>(_ known: [E], filled: Bool) -> E where E.RawValue == Int32 {
        if int(in: 0...5) == 0 {
            let raw = Bool.random(using: &rng) ? Int32(int(in: 100...100_000)) : Int32(int(in: -50...(-1)))
            if let value = E(rawValue: raw) {
                return value
            }
        }
        let lowest = filled && known.count > 1 ? 1 : 0
        return known[int(in: lowest...known.count - 1)]
    }

    /// nil, an empty message, a sparse one or a filled one; always a filled one when `filled`.
    mutating func optional<M: WireMessage>(filled: Bool, _ make: (inout RandomValues, Bool) -> M) -> M? {
        if filled {
            return make(&self, true)
        }
        switch int(in: 0...3) {
        case 0: return nil
        case 1: return M()
        case 2: return make(&self, false)
        default: return make(&self, true)
        }
    }

    mutating func array<T>(filled: Bool, _ make: (inout RandomValues, Bool) -> T) -> [T] {
        let count = int(in: (filled ? 1 : 0)...3)
        var array: [T] = []
        for _ in 0..<count {
            array.append(make(&self, filled))
        }
        return array
    }

    mutating func map<V>(filled: Bool, _ make: (inout RandomValues, Bool) -> V) -> [String: V] {
        let count = int(in: (filled ? 1 : 0)...3)
        var map: [String: V] = [:]
        for _ in 0..<count {
            let key = string(filled: filled || Bool.random(using: &rng))
            map[key] = make(&self, filled)
        }
        return map
    }

    /// The case index to set, or a value past the last case for "none" (never when `filled`).
    mutating func oneofChoice(count: Int, forced: Int?, filled: Bool) -> Int {
        if let forced {
            return forced % count
        }
        return int(in: 0...(filled ? count - 1 : count))
    }
}
