/// The instruments a source subscribed to, found by their bytes.
///
/// A trade names its instrument in the message's bytes. Looked up here, a subscribed one becomes the subscribed
/// `String` itself (no new string per trade), and its position finds the symbol without hashing a `String`. A
/// source subscribes to a few instruments, so they are kept sorted and searched by halves.
public final class VenueInstruments: Sendable {
    /// Unique, ordered by length, then by bytes.
    private let names: [String]
    /// Their UTF-8 one after another (one buffer, so a lookup touches one array, not one per instrument), and where
    /// each ends.
    private let spelled: [UInt8]
    private let ends: [Int]

    public init(_ instruments: [String] = []) {
        let unique = Set(instruments).map { Array($0.utf8) }.sorted { a, b in
            a.withUnsafeBytes { a in b.withUnsafeBytes { b in Self.order(a, b) < 0 } }
        }
        spelled = unique.flatMap { $0 }
        var ends: [Int] = []
        for utf8 in unique { ends.append((ends.last ?? 0) + utf8.count) }
        self.ends = ends
        names = unique.map { String(decoding: $0, as: UTF8.self) }
    }

    public var count: Int { names.count }

    public subscript(position: Int) -> String { names[position] }

    /// The position of the instrument spelled `bytes`, if it is one.
    func position(of bytes: UnsafeRawBufferPointer) -> Int? {
        spelled.withUnsafeBytes { spelled in
            ends.withUnsafeBufferPointer { ends in
                var low = 0
                var high = ends.count
                while low < high {
                    let middle = (low + high) / 2
                    let begin = middle == 0 ? 0 : ends[middle - 1]
                    let order = Self.order(UnsafeRawBufferPointer(rebasing: spelled[begin..<ends[middle]]), bytes)
                    if order == 0 { return middle }
                    if order < 0 { low = middle + 1 } else { high = middle }
                }
                return nil
            }
        }
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

    /// Negative, zero or positive as `a` comes before, is, or comes after `b`: by length, then by bytes. Run for
    /// every trade, so eight bytes are compared at a time (loaded big-endian, so that the first differing byte
    /// decides, as byte by byte).
    private static func order(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        var index = 0
        while index + 8 <= a.count {
            let x = a.loadUnaligned(fromByteOffset: index, as: UInt64.self).bigEndian
            let y = b.loadUnaligned(fromByteOffset: index, as: UInt64.self).bigEndian
            if x != y { return x < y ? -1 : 1 }
            index += 8
        }
        while index < a.count {
            if a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
            index += 1
        }
        return 0
    }
}
