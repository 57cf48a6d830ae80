/// An immutable heap buffer that many connections can queue at once without copying it.
///
/// This is what makes "encode once, send many" work: a price update is encoded into one
/// `SharedBytes`, and every subscriber's connection queues a reference to it between its own small
/// per-call header and tail (see ``Connection/enqueueFrame(prefix:payload:suffix:)``).
public final class SharedBytes: @unchecked Sendable {
    // @unchecked Sendable: the bytes are written only inside the initializer, before the object is
    // shared, and never again; `base` and `count` are immutable.

    /// Number of bytes.
    public let count: Int
    let base: UnsafeMutableRawPointer

    /// Allocates `count` bytes and lets `initialize` fill them (it must write all of them).
    public init(count: Int, initializingWith initialize: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        precondition(count >= 0, "negative byte count")
        self.count = count
        base = .allocate(byteCount: max(count, 1), alignment: 16)
        do {
            try initialize(UnsafeMutableRawBufferPointer(start: base, count: count))
        } catch {
            base.deallocate()
            throw error
        }
    }

    /// Copies `bytes`.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count) { target in
            if let source = bytes.baseAddress, !bytes.isEmpty {
                target.baseAddress!.copyMemory(from: source, byteCount: bytes.count)
            }
        }
    }

    /// Copies `bytes`.
    public convenience init(_ bytes: [UInt8]) {
        self.init(count: bytes.count) { target in
            bytes.withUnsafeBytes { source in
                if !source.isEmpty {
                    target.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: source.count)
                }
            }
        }
    }

    /// Internal: an uninitialized buffer the caller fills right away (spilling queued output).
    init(uninitializedCount count: Int) {
        self.count = count
        base = .allocate(byteCount: max(count, 1), alignment: 16)
    }

    deinit {
        base.deallocate()
    }

    /// Reads the bytes; the pointer is valid only inside `body`.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy of the bytes as an array.
    public var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }
}
