/// The instruments a source subscribed to, found by their bytes.
///
/// A trade names its instrument in the message's bytes. Looked up here, a subscribed one becomes the subscribed
/// `String` itself (no new string per trade), and its position finds the symbol without hashing a `String`. A
/// source subscribes to a few instruments, so they are kept sorted and searched by halves.
public struct VenueInstruments: Sendable {
    /// Unique, ordered by length, then by bytes.
    private let names: [String]
    private let utf8: [[UInt8]]

    public init(_ instruments: [String] = []) {
        let unique = Set(instruments).map { Array($0.utf8) }.sorted(by: { Self.order($0, $1) < 0 })
        utf8 = unique
        names = unique.map { String(decoding: $0, as: UTF8.self) }
    }

    public var count: Int { names.count }

    public subscript(position: Int) -> String { names[position] }

    /// The position of the instrument spelled `bytes`, if it is one.
    func position(of bytes: UnsafeRawBufferPointer) -> Int? {
        var low = 0
        var high = utf8.count
        while low < high {
            let middle = (low + high) / 2
            let order = utf8[middle].withUnsafeBytes { Self.order($0, bytes) }
            if order == 0 { return middle }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// The position of `instrument`, if it is one.
    public func position(of instrument: String) -> Int? {
        var instrument = instrument
        return instrument.withUTF8 { position(of: UnsafeRawBufferPointer($0)) }
    }

    /// The instrument spelled `bytes`: the subscribed `String` when it is one, else a new one.
    func name(_ bytes: UnsafeRawBufferPointer) -> String {
        position(of: bytes).map { names[$0] } ?? String(decoding: bytes, as: UTF8.self)
    }

    /// Negative, zero or positive as `a` comes before, is, or comes after `b`.
    private static func order(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for (x, y) in zip(a, b) where x != y {
            return x < y ? -1 : 1
        }
        return 0
    }
}
