/// Bump-allocated memory for the C structs, strings and arrays handed to protobuf-c's packer, and for the tree its
/// unpacker builds (through a `ProtobufCAllocator` over the arena, in the generated bridge).
///
/// Packing needs a tree of C structs that point at NUL-terminated strings and element arrays, and unpacking makes
/// one. Building it here costs one pointer bump per allocation instead of a malloc/free pair, and a small message
/// fits in the stack buffer of `withScratchArena` entirely. Everything is released at once when the arena ends.
///
/// Memory handed out is uninitialized; callers initialize it (C structs through their `__init` function)
/// before reading it.
struct ScratchArena: ~Copyable {
    private var cursor: UnsafeMutableRawPointer
    private var end: UnsafeMutableRawPointer
    /// Heap blocks to release; empty while the first (caller-provided) block suffices.
    private var heapBlocks: [UnsafeMutableRawPointer] = []

    /// The smallest heap block; larger requests get a block of their own size.
    private static let minimumHeapBlock = 4096

    /// Allocates from `initial` first. The arena does not own `initial`, which must outlive it.
    init(initial: UnsafeMutableRawBufferPointer) {
        if let base = initial.baseAddress, initial.count > 0 {
            cursor = base
            end = base + initial.count
        } else {
            let block = UnsafeMutableRawPointer.allocate(byteCount: Self.minimumHeapBlock, alignment: 16)
            heapBlocks.append(block)
            cursor = block
            end = block + Self.minimumHeapBlock
        }
    }

    deinit {
        for block in heapBlocks {
            block.deallocate()
        }
    }

    /// `byteCount` bytes aligned to `alignment` (a power of two no larger than 16).
    mutating func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
        let aligned = cursor.alignedUp(toMultipleOf: alignment)
        if byteCount <= end - aligned {
            cursor = aligned + byteCount
            return aligned
        }
        let size = max(byteCount, Self.minimumHeapBlock)
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        heapBlocks.append(block)
        cursor = block + byteCount
        end = block + size
        return block
    }

    /// Uninitialized storage for one `T`.
    mutating func allocate<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
        allocate(byteCount: MemoryLayout<T>.stride, alignment: MemoryLayout<T>.alignment)
            .bindMemory(to: T.self, capacity: 1)
    }

    /// Uninitialized storage for `count` values of `T`.
    mutating func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        allocate(byteCount: MemoryLayout<T>.stride * count, alignment: MemoryLayout<T>.alignment)
            .bindMemory(to: T.self, capacity: count)
    }

    /// A NUL-terminated copy of the string's UTF-8, as protobuf-c reads strings.
    mutating func cString(_ string: String) -> UnsafeMutablePointer<CChar> {
        var string = string
        return string.withUTF8 { utf8 in
            let count = utf8.count
            let copy = allocate(byteCount: count + 1, alignment: 1)
            if let source = utf8.baseAddress {
                copy.copyMemory(from: source, byteCount: count)
            }
            copy.storeBytes(of: 0, toByteOffset: count, as: UInt8.self)
            return copy.bindMemory(to: CChar.self, capacity: count + 1)
        }
    }

    /// A copy of `bytes`; `nil` when they are empty, as protobuf-c expects of an empty bytes field.
    mutating func copy(_ bytes: [UInt8]) -> UnsafeMutablePointer<UInt8>? {
        bytes.withUnsafeBytes { source in
            guard let base = source.baseAddress, source.count > 0 else { return nil }
            let copy = allocate(byteCount: source.count, alignment: 1)
            copy.copyMemory(from: base, byteCount: source.count)
            return copy.bindMemory(to: UInt8.self, capacity: source.count)
        }
    }
}

/// Runs `body` with an arena whose first 2 KiB live on the stack; heap blocks it adds are freed on return.
@inline(__always)
func withScratchArena<R>(_ body: (inout ScratchArena) -> R) -> R {
    withUnsafeTemporaryAllocation(byteCount: 2048, alignment: 16) { buffer in
        var arena = ScratchArena(initial: buffer)
        return body(&arena)
    }
}
