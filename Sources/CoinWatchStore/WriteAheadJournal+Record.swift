import Synchronization
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The record format (see `WriteAheadJournal`) and replay.
extension WriteAheadJournal {
    /// Length, checksum, sequence number.
    static let headerSize = 16

    private enum Kind {
        static let put: UInt8 = 1
        static let delete: UInt8 = 2
    }

    /// The encoding buffer's capacity kept between commits.
    static let retainedBufferCapacity = 1 << 20

    /// The size of `batch`'s record.
    static func encodedSize(_ batch: WriteBatch) -> Int {
        batch.operations.reduce(headerSize) { size, operation in
            switch operation {
            case .put(let key, let value): size + 9 + key.count + value.count
            case .delete(let key): size + 5 + key.count
            }
        }
    }

    /// Encodes `batch` as the record numbered `sequence` into `buffer` (replacing its contents).
    static func encode(_ batch: WriteBatch, sequence: UInt64, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: repeatElement(0, count: headerSize))
        for operation in batch.operations {
            switch operation {
            case .put(let key, let value):
                buffer.append(Kind.put)
                appendLength(key.count, to: &buffer)
                buffer.append(contentsOf: key)
                appendLength(value.count, to: &buffer)
                buffer.append(contentsOf: value)
            case .delete(let key):
                buffer.append(Kind.delete)
                appendLength(key.count, to: &buffer)
                buffer.append(contentsOf: key)
            }
        }
        let payloadLength = buffer.count - headerSize
        store(UInt32(payloadLength), into: &buffer, at: 0)
        store(sequence, into: &buffer, at: 8)
        let checksum = buffer.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[8...])) }
        store(checksum, into: &buffer, at: 4)
    }

    /// The batch in a record's payload, or `nil` if the payload is malformed.
    static func decode(payload: UnsafeRawBufferPointer) -> WriteBatch? {
        var batch = WriteBatch()
        var offset = 0
        func field() -> [UInt8]? {
            guard payload.count - offset >= 4 else { return nil }
            let length = Int(load(payload, at: offset) as UInt32)
            offset += 4
            guard payload.count - offset >= length else { return nil }
            defer { offset += length }
            return Array(payload[offset..<offset + length])
        }
        while offset < payload.count {
            let kind = payload[offset]
            offset += 1
            switch kind {
            case Kind.put:
                guard let key = field(), let value = field() else { return nil }
                batch.put(key, value)
            case Kind.delete:
                guard let key = field() else { return nil }
                batch.delete(key)
            default:
                return nil
            }
        }
        return batch
    }

    /// Applies to the database, unsynced, every intact record after `checkpoint`, in order; returns how many.
    func replay(after checkpoint: UInt64) throws(StoreError) -> Int {
        let (descriptor, capacity) = state.withLock { ($0.descriptor, $0.capacity) }
        var header = [UInt8](repeating: 0, count: Self.headerSize)
        var payload: [UInt8] = []
        var position = 0
        var expected = checkpoint + 1
        var replayed = 0
        while position + Self.headerSize <= capacity {
            try read(into: &header, at: position, descriptor: descriptor)
            let length = Int(Self.load(header, at: 0) as UInt32)
            let checksum: UInt32 = Self.load(header, at: 4)
            let sequence: UInt64 = Self.load(header, at: 8)
            guard length > 0, length <= capacity - position - Self.headerSize, sequence == expected else { break }
            payload = [UInt8](repeating: 0, count: length)
            try read(into: &payload, at: position + Self.headerSize, descriptor: descriptor)
            let headerCRC = header.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[8...])) }
            let crc = payload.withUnsafeBytes { CRC32C.checksum($0, continuing: headerCRC) }
            guard crc == checksum,
                  let batch = payload.withUnsafeBytes({ Self.decode(payload: $0) })
            else {
                break
            }
            try database.write(batch, sync: false)
            position += Self.headerSize + length
            expected += 1
            replayed += 1
        }
        state.withLock { state in
            state.lastSequence = expected - 1
            state.position = position
        }
        return replayed
    }

    private func read(into buffer: inout [UInt8], at offset: Int, descriptor: Int32) throws(StoreError) {
        let count = buffer.count
        // 0 when all was read, -1 at the end of the file, else the errno of the failed pread.
        let failure: Int32 = buffer.withUnsafeMutableBytes { bytes in
            var done = 0
            while done < count {
                let got = pread(descriptor, bytes.baseAddress! + done, count - done, off_t(offset + done))
                if got < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if got == 0 { return -1 }
                done += got
            }
            return 0
        }
        if failure == -1 { throw StoreError(code: .ioError, message: "IO error: \(path) ends early") }
        guard failure == 0 else { throw Self.ioError("pread", path, errno: failure) }
    }

    // MARK: Little-endian integers

    private static func appendLength(_ length: Int, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: UInt32(length).littleEndian) { buffer.append(contentsOf: $0) }
    }

    static func store<T: FixedWidthInteger>(_ value: T, into buffer: inout [UInt8], at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { bytes in
            for index in 0..<bytes.count { buffer[offset + index] = bytes[index] }
        }
    }

    static func load<T: FixedWidthInteger>(_ bytes: [UInt8], at offset: Int) -> T {
        bytes.withUnsafeBytes { load($0, at: offset) }
    }

    static func load<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> T {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

/// CRC-32C (Castagnoli), the checksum LevelDB and ext4 use for their own records.
enum CRC32C {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 {
            crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
        }
        return crc
    }

    /// The checksum of `bytes`, or of the bytes checksummed before them (`continuing`) followed by `bytes`.
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing previous: UInt32 = 0) -> UInt32 {
        var crc = ~previous
        table.withUnsafeBufferPointer { table in
            for byte in bytes {
                crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
            }
        }
        return ~crc
    }
}
