#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif
import CCoinWatchSystem
import Synchronization

/// Makes write batches durable with one `fdatasync` of a preallocated file, and applies them to the database
/// without a sync.
///
/// A synced LevelDB write appends to LevelDB's log and calls `fdatasync`; because the append grows the file, the
/// file system writes the inode as well as the data, two dependent writes per commit. This journal is a file of
/// fixed size, filled with zeros when it is created (see `openOrCreate` for why not `posix_fallocate`), and records
/// overwrite it from the start, so a commit's `fdatasync` has (almost) no metadata to write: on this project's test
/// machine about half the time of a sync after an append (108–128 µs against 183–257 µs; `scripts/bench-fsync`,
/// docs/PERFORMANCE.md).
///
/// A commit is two steps, which may run on two threads: `append` writes the record, starts the device writing it
/// (`sync_file_range`) and applies the batch to LevelDB while the device works; `sync(through:)` waits in
/// `fdatasync` until the record is on stable storage. One sync covers every record appended before it starts, so a
/// writer that appends the next round while the previous round's sync is in flight pays for the disk's latency once
/// per sync, not once per round (`commit` does both steps for one batch).
///
/// A failed `fdatasync` leaves the records it covered in doubt, and Linux may drop the failed pages from its cache,
/// so a later sync that succeeds does not bring them back. The next sync is therefore a checkpoint instead, which
/// makes everything LevelDB holds durable in its table files and starts the journal again, so replay never meets a
/// hole followed by acknowledged records.
///
/// What is durable where: a committed batch is in the journal (synced) and in LevelDB (not synced). LevelDB makes
/// its writes durable by itself when it flushes its memory table to a table file. Before the journal is reused from
/// its start, a checkpoint forces that flush and then records, with a synced write under `checkpointKey`, the
/// sequence number of the last batch the database now holds durably. Opening the journal replays, in order, every
/// record after that number: batches LevelDB may have lost in a crash are applied again, and applying again one it
/// kept changes nothing, since a batch holds whole values.
///
/// Record layout (little-endian): payload length (u32), CRC-32C of the next 8 + length bytes (u32), sequence number
/// (u64), payload: per operation a kind byte (1 put, 2 delete), key length (u32), key, and for a put value length
/// (u32), value. Replay stops at the first record whose length is zero or runs past the end, whose checksum fails
/// (a torn write) or whose sequence number is not the next one (the rest of an older round of the file).
///
/// Appends are serialised by the state's `Mutex`, syncs by `syncLock`: the settings store's writer and sync threads
/// do both all the time, and the credential store commits its rare changes through the same journal, so they are
/// ordered with the records a replay applies. `close()` only after every writer has stopped. `sync` does not hold
/// the state's lock while it waits for the disk, so an appender is never held up by a sync.
public final class WriteAheadJournal: Sendable {
    /// The journal's size when it is created: room for several seconds of saves at full speed between checkpoints.
    public static let defaultCapacity = 32 << 20

    /// The file's path.
    public let path: String
    let database: Database
    let checkpointKey: [UInt8]

    struct State {
        /// `-1` once closed.
        var descriptor: Int32
        var capacity: Int
        /// Where the next record goes.
        var position = 0
        /// The sequence number of the last record written (or, after a checkpoint, made durable in the database).
        var lastSequence: UInt64
        /// Reused for encoding records.
        var buffer: [UInt8] = []
        /// A sync failed: the records it covered may be lost from the page cache, so the next sync checkpoints.
        var mustCheckpoint = false
    }

    let state: Mutex<State>
    /// The sequence number of the last record known to be on stable storage (synced, or checkpointed into the
    /// database's table files).
    let durableSequence: Atomic<UInt64>
    /// Held by a sync for the whole `fdatasync`, so concurrent `sync` calls wait for one another instead of each
    /// flushing the same pages.
    let syncLock = Mutex<Void>(())

    /// Opens the journal at `path` (creating it, `capacity` bytes reading as zeros, if it does not exist) and brings
    /// `database` up to date with it: every batch recorded after the database's last checkpoint is applied again,
    /// then checkpointed.
    ///
    /// - Throws: `.ioError` when the file cannot be created, read or synced, or what the database reports.
    public init(
        path: String,
        database: Database,
        checkpointKey: [UInt8],
        capacity: Int = WriteAheadJournal.defaultCapacity
    ) throws(StoreError) {
        precondition(capacity >= Self.headerSize + 1, "journal capacity below one record")
        self.path = path
        self.database = database
        self.checkpointKey = checkpointKey
        let (descriptor, size) = try Self.openOrCreate(path: path, capacity: capacity)
        let checkpoint: UInt64
        do throws(StoreError) {
            checkpoint = try Self.readCheckpoint(database, key: checkpointKey)
        } catch {
            Self.closeFile(descriptor)
            throw error
        }
        state = Mutex(State(descriptor: descriptor, capacity: size, lastSequence: checkpoint))
        durableSequence = Atomic(checkpoint)
        do throws(StoreError) {
            let replayed = try replay(after: checkpoint)
            if replayed > 0 {
                try state.withLock { state throws(StoreError) in try self.checkpoint(&state) }
            }
        } catch {
            close(checkpointing: false)
            throw error
        }
    }

    deinit {
        assert(state.withLock { $0.descriptor } < 0, "WriteAheadJournal at \(path) was deinitialised without close()")
        // Release builds: free the descriptor; the database may be closed already, so no checkpoint.
        close(checkpointing: false)
    }

    /// Records `batch` durably in the journal and applies it to the database (unsynced): `append` then `sync`.
    ///
    /// When LevelDB refuses the batch after it was recorded, the record is erased again, so the batch stays
    /// refused. Any other thrown error leaves the batch's fate open: after a failed sync the record may or may not
    /// be on disk, and LevelDB has already taken the batch, so it may be there after the next open.
    public func commit(_ batch: WriteBatch) throws(StoreError) {
        try sync(through: append(batch))
    }

    /// Writes `batch`'s record into the journal (not yet synced) and applies the batch to the database (unsynced);
    /// returns its sequence number, for `sync(through:)`. When the batch does not fit in what is left of the file, a
    /// checkpoint comes first and the journal starts again at its beginning; a batch larger than the whole file is
    /// written to the database with a synced write instead (and is durable on return).
    ///
    /// When LevelDB refuses the batch, the record is erased again (with a sync), so the batch stays refused and the
    /// next record takes its place.
    public func append(_ batch: WriteBatch) throws(StoreError) -> UInt64 {
        try state.withLock { state throws(StoreError) -> UInt64 in
            guard state.descriptor >= 0 else { throw .closed(path) }
            if Self.encodedSize(batch) > state.capacity {
                try checkpoint(&state)
                try database.write(batch, sync: true)
                return state.lastSequence
            }
            Self.encode(batch, sequence: state.lastSequence + 1, into: &state.buffer)
            // Keep the buffer for the next round, unless a burst made it large.
            defer { if state.buffer.capacity > Self.retainedBufferCapacity { state.buffer = [] } }
            if state.position + state.buffer.count > state.capacity {
                try checkpoint(&state)
            }
            let failure = state.buffer.withUnsafeBytes {
                Self.writeAll($0, at: state.position, descriptor: state.descriptor)
            }
            guard failure == 0 else { throw Self.ioError("pwrite", path, errno: failure) }
            // The device writes the record while LevelDB takes the batch; fdatasync below waits for both halves.
            _ = cw_sys_start_writeback(state.descriptor, Int64(state.position), Int64(state.buffer.count))
            do throws(StoreError) {
                try database.write(batch, sync: false)
            } catch {
                // LevelDB refused the batch (a full disk, say) and the caller will report it as failed: take the
                // record back out, so that a later open does not apply it. If even that fails, it stays, and an
                // open may apply it, as it may a batch whose sync failed.
                let header = [UInt8](repeating: 0, count: Self.headerSize)
                if (try? write(header, at: state.position, descriptor: state.descriptor)) == nil {
                    state.position += state.buffer.count
                    state.lastSequence += 1
                }
                throw error
            }
            state.position += state.buffer.count
            state.lastSequence += 1
            return state.lastSequence
        }
    }

    /// Returns once every record appended up to `sequence` is on stable storage: at once if an earlier sync or
    /// checkpoint covered it, else after one `fdatasync` covering every record appended so far (or, after a failed
    /// sync, a checkpoint). Runs beside `append`: the journal's lock is not held while the disk works.
    public func sync(through sequence: UInt64) throws(StoreError) {
        guard durableSequence.load(ordering: .acquiring) < sequence else { return }
        try syncLock.withLock { _ throws(StoreError) in
            guard durableSequence.load(ordering: .acquiring) < sequence else { return }
            let (descriptor, target, mustCheckpoint) = state.withLock { ($0.descriptor, $0.lastSequence, $0.mustCheckpoint) }
            guard descriptor >= 0 else { throw .closed(path) }
            if mustCheckpoint {
                try state.withLock { state throws(StoreError) in
                    try checkpoint(&state)
                    state.mustCheckpoint = false
                }
                return
            }
            // fdatasync(2): the file's size never changes, so only the data blocks are written. Every record up to
            // `target` was written (pwrite returned) before the lock above was released.
            guard fdatasync(descriptor) == 0 else {
                let error = Self.ioError("fdatasync", path)
                state.withLock { $0.mustCheckpoint = true }
                throw error
            }
            durableSequence.store(max(target, durableSequence.load(ordering: .relaxed)), ordering: .releasing)
        }
    }

    /// Closes the file, first checkpointing (unless `checkpointing` is false) so that the next open has nothing to
    /// replay. Without the checkpoint, or if it fails, batches committed so far stay durable all the same: the next
    /// open replays what the database lacks. Idempotent.
    public func close(checkpointing: Bool = true) {
        state.withLock { state in
            guard state.descriptor >= 0 else { return }
            if checkpointing && state.position > 0 {
                try? checkpoint(&state)
            }
            // close(2): the descriptor is released even when it reports an error; every record was synced already.
            Self.closeFile(state.descriptor)
            state.descriptor = -1
        }
    }

    // MARK: Checkpoints

    /// Makes everything the database holds durable in its table files, records `lastSequence` as checkpointed, and
    /// starts the journal again at its beginning.
    func checkpoint(_ state: inout State) throws(StoreError) {
        // compactRange flushes LevelDB's memory table to a synced table file before it compacts; an empty range
        // beyond every key (all of CoinWatch's keys are ASCII) leaves nothing else to do.
        try database.compactRange(from: Self.beyondEveryKey, to: Self.beyondEveryKey)
        var value = [UInt8](repeating: 0, count: 8)
        Self.store(state.lastSequence, into: &value, at: 0)
        // Synced: once it is durable the records up to `lastSequence` are no longer needed.
        try database.put(checkpointKey, value, sync: true)
        state.position = 0
        durableSequence.store(max(state.lastSequence, durableSequence.load(ordering: .relaxed)), ordering: .releasing)
    }

    static let beyondEveryKey: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF]

    static func readCheckpoint(_ database: Database, key: [UInt8]) throws(StoreError) -> UInt64 {
        guard let value = try database.get(key) else { return 0 }
        guard value.count == 8 else {
            throw StoreError(
                code: .corruption,
                message: "store at \(database.path): the journal checkpoint holds \(value.count) bytes, not 8"
            )
        }
        return load(value, at: 0)
    }

    // MARK: File

    /// Opens the journal file, or creates it (reading as zeros) and makes its creation durable; returns its size.
    static func openOrCreate(path: String, capacity requested: Int) throws(StoreError) -> (Int32, Int) {
        // open(2): the descriptor is ours to close.
        let existing = open(path, O_RDWR | O_CLOEXEC)
        if existing >= 0 {
            var info = stat()
            guard fstat(existing, &info) == 0 else {
                let error = ioError("fstat", path)
                closeFile(existing)
                throw error
            }
            if info.st_size >= Int(headerSize) + 1 {
                return (existing, Int(info.st_size))
            }
            // A file cut short before it was filled: nothing in it was ever committed.
            closeFile(existing)
        } else if errno != ENOENT {
            throw ioError("open", path)
        }
        // On a small volume the journal takes at most a quarter of the free space (it only needs room for the
        // batches between two checkpoints), so a store that fits still starts.
        let capacity = max(min(requested, freeBytes(near: path) / 4) & ~4095, min(requested, minimumCapacity))
        let temporary = path + ".new"
        let descriptor = open(temporary, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ioError("create", temporary) }
        do throws(StoreError) {
            // Real zeros, not posix_fallocate: ext4 (and XFS) keep fallocated blocks as "unwritten" extents, and
            // the first write into each block converts its extent when the write completes, so that commit's
            // fdatasync must also write the inode: 177–180 µs per 4 KiB commit here instead of 141–144 µs
            // (`BYTES=4096 scripts/bench-fsync`), for a whole lap of the journal. Filling 32 MiB takes about
            // 20 ms, once.
            let zeros = [UInt8](repeating: 0, count: min(capacity, 1 << 20))
            var offset = 0
            while offset < capacity {
                let chunk = min(zeros.count, capacity - offset)
                let failure = zeros.withUnsafeBytes { bytes in
                    writeAll(UnsafeRawBufferPointer(rebasing: bytes[0..<chunk]), at: offset, descriptor: descriptor)
                }
                guard failure == 0 else { throw ioError("pwrite", temporary, errno: failure) }
                offset += chunk
            }
            guard fsync(descriptor) == 0 else { throw ioError("fsync", temporary) }
            // Renamed only once its size is durable, so a crash while creating it leaves no short journal behind.
            guard rename(temporary, path) == 0 else { throw ioError("rename", temporary) }
            try syncDirectory(of: path)
        } catch {
            closeFile(descriptor)
            _ = unlink(temporary)
            throw error
        }
        return (descriptor, capacity)
    }

    /// Writes `record` at `offset` and waits until it is on stable storage.
    func write(_ record: [UInt8], at offset: Int, descriptor: Int32) throws(StoreError) {
        let failure = record.withUnsafeBytes { Self.writeAll($0, at: offset, descriptor: descriptor) }
        guard failure == 0 else { throw Self.ioError("pwrite", path, errno: failure) }
        // fdatasync(2): the file's size never changes, so only the data blocks are written.
        guard fdatasync(descriptor) == 0 else { throw Self.ioError("fdatasync", path) }
    }

    /// Writes all of `bytes` at `offset`; 0, or the `errno` of the failed `pwrite`.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int, descriptor: Int32) -> Int32 {
        var done = 0
        while done < bytes.count {
            let written = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            done += written
        }
        return 0
    }

    /// The smallest journal created when space is short: a few dozen rounds of saves between checkpoints.
    static let minimumCapacity = 256 * 1024

    /// Bytes an unprivileged writer may still use on the file system holding `path`'s directory (`Int.max` if
    /// `statvfs` cannot tell).
    static func freeBytes(near path: String) -> Int {
        var info = statvfs()
        guard statvfs(directory(of: path), &info) == 0 else { return Int.max }
        let (bytes, overflow) = Int(info.f_bavail).multipliedReportingOverflow(by: Int(info.f_frsize))
        return overflow ? Int.max : bytes
    }

    static func directory(of path: String) -> String {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return directory.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : directory
    }

    static func syncDirectory(of path: String) throws(StoreError) {
        let directory = directory(of: path)
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ioError("open", directory) }
        defer { closeFile(descriptor) }
        guard fsync(descriptor) == 0 else { throw ioError("fsync", directory) }
    }

    static func closeFile(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }

    static func ioError(_ call: String, _ path: String, errno number: Int32 = errno) -> StoreError {
        let reason = String(cString: strerror(number))
        let code: StoreError.Code = number == ENOENT ? .notFound : .ioError
        return StoreError(
            code: code, message: "IO error: \(call) \(path): \(reason)", isDiskFull: number == ENOSPC || number == EDQUOT
        )
    }
}
