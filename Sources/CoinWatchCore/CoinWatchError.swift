/// An error of this project: a kind to branch on (`code`) and a sentence for a person (`message`).
///
/// Every error type is a struct (fields can be added without breaking callers) with a nested `Code` that conforms to
/// `ErrorCode`, so a caller branches the same way on any of them (`if error.code == .corruption`), logs print
/// `code` and `message` the same way, and adding a kind never breaks a caller's `switch`. Types may carry more
/// (`RPCError`'s wire number, `FrameError`'s declared length); `description` is the type's own one-line form.
public protocol CoinWatchError: Error, Hashable, Sendable, CustomStringConvertible {
    associatedtype Code: ErrorCode

    /// The kind of failure, for branching.
    var code: Code { get }
    /// What went wrong, for a person: names the field, the file, the limit or the state.
    var message: String { get }
}

/// The kind of an error: one named constant of an open set.
///
/// Every `Code` follows one pattern: a struct holding its stable `name`, a private initialiser, and a `static let`
/// per kind, documented where it is declared:
///
/// ```swift
/// public struct Code: ErrorCode {
///     public let name: String
///     private init(_ name: String) { self.name = name }
///     public var description: String { name }
///
///     /// Stored data failed a consistency check.
///     public static let corruption = Code("corruption")
/// }
/// ```
///
/// Codes compare by name. A code that stands for a number (`RPCError.Code`'s gRPC status) keeps the number too.
public protocol ErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The code as logs and messages print it (`corruption`, `INVALID_ARGUMENT`); never changes once released.
    var name: String { get }
}
