import CoinWatchProto
import CoinWatchRPC
import Dispatch
import Synchronization

/// The hand-off from the settings writer, which validates and appends rounds, to the sync thread, which makes them
/// durable and answers them.
///
/// The writer never waits for the disk: it appends a round and goes on to the next while earlier rounds are being
/// synced. It waits only when the rounds in flight hold more requests than `limit`, which bounds the memory a slow
/// disk can make the writer hold. The sync thread takes every round queued so far at once, so one `fdatasync`
/// covers all of them.
final class SettingsCommitQueue: Sendable {
    private struct State {
        var rounds: [SettingsRound] = []
        /// Requests in rounds handed over and not yet answered.
        var inFlight = 0
        var syncerAsleep = false
        var writerBlocked = false
        var closing = false
    }

    let limit: Int
    private let state = Mutex(State())
    private let syncerWakeup = DispatchSemaphore(value: 0)
    private let writerWakeup = DispatchSemaphore(value: 0)

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Writer: hands `round` over, first waiting while the rounds in flight already hold `limit` requests or more.
    func push(_ round: SettingsRound) {
        while true {
            let (accepted, wakeSyncer): (Bool, Bool) = state.withLock { state in
                guard state.inFlight < limit || state.rounds.isEmpty && state.inFlight == 0 else {
                    state.writerBlocked = true
                    return (false, false)
                }
                state.rounds.append(round)
                state.inFlight += round.requests.count
                let wake = state.syncerAsleep
                state.syncerAsleep = false
                return (true, wake)
            }
            if wakeSyncer { syncerWakeup.signal() }
            if accepted { return }
            writerWakeup.wait()
        }
    }

    /// Sync thread: blocks until rounds are queued and takes them all (in order); an empty result means the queue is
    /// closed and drained.
    func takeAll() -> [SettingsRound] {
        while true {
            let taken: [SettingsRound]? = state.withLock { state in
                if !state.rounds.isEmpty {
                    defer { state.rounds = [] }
                    return state.rounds
                }
                if state.closing { return [] }
                state.syncerAsleep = true
                return nil
            }
            if let taken { return taken }
            syncerWakeup.wait()
        }
    }

    /// Sync thread: `count` requests taken earlier are answered; a writer waiting for room may go on.
    func answered(_ count: Int) {
        let wakeWriter = state.withLock { state in
            state.inFlight -= count
            let wake = state.writerBlocked && state.inFlight < limit
            if wake { state.writerBlocked = false }
            return wake
        }
        if wakeWriter { writerWakeup.signal() }
    }

    /// Whether the writer is waiting for room to hand a round over (for tests).
    var isWriterWaiting: Bool {
        state.withLock { $0.writerBlocked }
    }

    /// Writer, once it has handed over its last round: the sync thread drains what is queued and stops.
    func close() {
        let wakeSyncer = state.withLock { state in
            state.closing = true
            let wake = state.syncerAsleep
            state.syncerAsleep = false
            return wake
        }
        if wakeSyncer { syncerWakeup.signal() }
    }
}

/// One round of the settings writer: the requests it took in one drain of the queue, what became of each, and the
/// batch it appended (if any) waiting to be synced.
struct SettingsRound: Sendable {
    enum Outcome: Sendable {
        case saved(V1.Settings)
        case deleted(existed: Bool)
        case failed(RPCError)
        /// A value another node stored, applied here; nobody to answer.
        case replicated
    }

    /// Counts rounds from 1; the writer's view of memory holds, per device, the round that last changed it.
    let number: UInt64
    /// The failure epoch (see `SettingsWriter`) the round was validated in.
    let epoch: UInt64
    let requests: [PendingWrite]
    let outcomes: [Outcome]
    /// Canonical device id → its state after the round (`.some(nil)`: deleted); empty when nothing changed.
    let staged: [String: V1.Settings?]
    /// Each saved device's encoded record, which its answer and the table's response wrap.
    let records: [String: [UInt8]]
    let changes: [SettingsChange]
    /// The journal sequence number of the round's batch; nil when it wrote nothing.
    let sequence: UInt64?
    /// Why the round's batch was refused (every request then fails on a single node); nil when it was appended or
    /// empty.
    let appendError: RPCError?
    /// Cluster mode: what the round staged was stored in the cluster before it was appended, so the journal holds
    /// only this node's copy and a local failure does not fail the round.
    let isReplicated: Bool
}
