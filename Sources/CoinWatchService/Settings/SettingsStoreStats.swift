import CoinWatchCore

/// Counters of the settings writer, for health checks and for judging how well group commit works.
public struct SettingsStoreStats: Sendable, Hashable {
    /// Saves and deletes submitted and not yet taken by the writer.
    public var pendingWrites: Int = 0
    /// Rounds that wrote a batch (each one drain of the queue); several may share one sync.
    public var batchesWritten: UInt64 = 0
    /// Requests (successful or not) processed in the batches that were written.
    public var requestsInWrittenBatches: UInt64 = 0
    /// `requestsPerBatch[i]` counts written batches that held between `2^i` and `2^(i+1) - 1` requests.
    public var requestsPerBatch: [UInt64] = []
    /// The most requests one written batch held.
    public var largestBatch: Int = 0
    /// Batches the journal refused or could not sync. On a single node every request in them failed and memory kept
    /// its previous state; in cluster mode the cluster had stored them, so they were answered and only this node's
    /// local copy misses them (until its next start reads the bucket again).
    public var batchesFailed: UInt64 = 0
    /// The journal's message for the most recent refused or unsynced batch, `nil` if there was none.
    public var lastWriteError: String? = nil
    /// Saves and deletes answered with success.
    public var writesCommitted: UInt64 = 0
    /// Saves and deletes answered with an error by the writer (version mismatch, symbol limit, refused batch).
    public var writesFailed: UInt64 = 0
    /// Syncs made (one `fdatasync` each, covering every round appended before it began).
    public var syncs: UInt64 = 0
    /// Requests answered after those syncs.
    public var requestsInSyncs: UInt64 = 0
    /// Time spent waiting in syncs, in nanoseconds.
    public var syncNanoseconds: UInt64 = 0

    public init() {}

    /// Requests per written round.
    public var averageRequestsPerBatch: Double {
        batchesWritten == 0 ? 0 : Double(requestsInWrittenBatches) / Double(batchesWritten)
    }

    /// Requests per `fdatasync`: how many writes one disk flush paid for.
    public var averageRequestsPerSync: Double {
        syncs == 0 ? 0 : Double(requestsInSyncs) / Double(syncs)
    }

    /// The average time one sync took, in microseconds.
    public var averageSyncMicroseconds: Double {
        syncs == 0 ? 0 : Double(syncNanoseconds) / Double(syncs) / 1000
    }

    mutating func recordSync(requests: Int, duration: Duration) {
        syncs += 1
        requestsInSyncs += UInt64(requests)
        syncNanoseconds += UInt64(max(0, duration.inNanoseconds))
    }

    mutating func recordWrittenBatch(requests: Int) {
        batchesWritten += 1
        requestsInWrittenBatches += UInt64(requests)
        largestBatch = max(largestBatch, requests)
        let bucket = Int.bitWidth - 1 - requests.leadingZeroBitCount
        if requestsPerBatch.count <= bucket {
            requestsPerBatch.append(contentsOf: repeatElement(0, count: bucket + 1 - requestsPerBatch.count))
        }
        requestsPerBatch[bucket] += 1
    }
}
