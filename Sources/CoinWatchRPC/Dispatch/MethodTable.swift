#if canImport(Glibc)
internal import Glibc
#endif

/// The methods a server serves, in a fixed order, with their paths as bytes at the same indices.
///
/// Every transport looks methods up here by the bytes it received (a native `Call`'s method field, an HTTP/2
/// `:path` without its leading slash): comparing bytes at an index touches no reference counts, where walking
/// an array of `RPCMethod`s would retain each closure. The index is also what per-method metrics are kept by.
/// A class, so the per-call lookup borrows the table instead of copying (and retaining) its arrays.
package final class MethodTable: Sendable {
    /// Sorted by path.
    package let methods: [RPCMethod]
    private let paths: [[UInt8]]
    private let byPath: [String: Int]

    package init(_ methods: [RPCMethod]) {
        var table: [String: RPCMethod] = [:]
        for method in methods {
            precondition(table[method.path] == nil, "method \(method.path) registered twice")
            table[method.path] = method
        }
        self.methods = table.keys.sorted().map { table[$0]! }
        self.paths = self.methods.map { Array($0.path.utf8) }
        var byPath: [String: Int] = [:]
        for (index, method) in self.methods.enumerated() { byPath[method.path] = index }
        self.byPath = byPath
    }

    package var count: Int { methods.count }

    package subscript(index: Int) -> RPCMethod { methods[index] }

    /// The index of the method whose path is `bytes`, without making a String.
    package func index(path bytes: UnsafeRawBufferPointer) -> Int? {
        for index in paths.indices where paths[index].count == bytes.count {
            let equal = paths[index].withUnsafeBytes { path in
                bytes.isEmpty || memcmp(path.baseAddress!, bytes.baseAddress!, bytes.count) == 0
            }
            if equal { return index }
        }
        return nil
    }

    package func index(path: String) -> Int? { byPath[path] }

    /// Every path, sorted.
    package var allPaths: [String] { methods.map(\.path) }

    /// The service names (`coinwatch.v1.CoinWatch`), sorted, each once.
    package var serviceNames: [String] {
        var seen = Set<String>()
        return methods.map { Self.split($0.path).service }.filter { seen.insert($0).inserted }
    }

    /// `("coinwatch.v1.CoinWatch", "GetSettings")` for `coinwatch.v1.CoinWatch/GetSettings`.
    package static func split(_ path: String) -> (service: String, method: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }
}
