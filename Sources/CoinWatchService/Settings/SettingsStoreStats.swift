/// Counters of the settings writer, for health checks and for judging how well group commit works.
public struct SettingsStoreStats: Sendable, Hashable {
    /// Saves and deletes submitted and not yet taken by the writer.
    public var pendingWrites: Int = 0
    /// Durable LevelDB writes made (one `fsync` each), each covering one drain of the queue.
    public var batchesWritten: UInt64 = 0
    /// Requests (successful or not) processed in the batches that were written.
    public var requestsInWrittenBatches: UInt64 = 0
    /// `requestsPerBatch[i]` counts written batches that held between `2^i` and `2^(i+1) - 1` requests.
    public var requestsPerBatch: [UInt64] = []
    /// The most requests one written batch held.
    public var largestBatch: Int = 0
    /// Batches LevelDB refused; every request in them failed and memory kept its previous state.
    public var batchesFailed: UInt64 = 0
    /// LevelDB's message for the most recent refused batch, `nil` if none was refused.
    public var lastWriteError: String? = nil
    /// Saves and deletes answered with success.
    public var writesCommitted: UInt64 = 0
    /// Saves and deletes answered with an error by the writer (version mismatch, symbol limit, refused batch).
    public var writesFailed: UInt64 = 0

    public init() {}

    /// Requests per `fsync`: how many writes one disk flush paid for.
    public var averageRequestsPerBatch: Double {
        batchesWritten == 0 ? 0 : Double(requestsInWrittenBatches) / Double(batchesWritten)
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
