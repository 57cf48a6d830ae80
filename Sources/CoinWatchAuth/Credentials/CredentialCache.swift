import CoinWatchTLS
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The credentials checked recently, so that a call whose credential was seen before costs a comparison of its
/// token and one atomic load (`CredentialStore.generation`), not a hash of the secret.
///
/// The authoriser runs on the event loop of each call, and the dispatcher gives it no per-connection state, so
/// the cache is split into stripes picked by the calling thread: each loop finds its own stripe (uncontended
/// locks, no cache line shared between loops), and two threads that happen to share a stripe are still correct,
/// only slower. Each stripe remembers the last token it saw (the common case: a connection's calls all carry the
/// same one) and a bounded table of others. An entry is valid only while the store's generation has not moved
/// since it was made; only successful checks are kept, so the table holds tokens that are real credentials.
final class CredentialCache: Sendable {
    struct Entry {
        let principal: Principal
        let bucket: SharedTokenBucket?
        let generation: UInt64
    }

    /// A peer as the anonymous limits see it, parsed once per peer text.
    struct PeerEntry {
        let address: PeerAddress
        let bucket: SharedTokenBucket?
        let generation: UInt64
    }

    final class Stripe: Sendable {
        struct State {
            var lastToken = ""
            var last: Entry?
            var entries: [String: Entry] = [:]
            var peers: [String: PeerEntry] = [:]
        }

        let state = Mutex(State())
    }

    static let stripeCount = 64
    /// Entries per stripe before it is emptied (and refilled by the calls that follow).
    static let stripeCapacity = 4096
    private let stripes: [Stripe] = (0..<CredentialCache.stripeCount).map { _ in Stripe() }

    /// The calling thread's stripe.
    private var stripe: Stripe {
        // pthread_self(3): the calling thread's id, always succeeds. Thread ids are addresses of thread control
        // blocks, spaced by the stack size, so the low bits are mixed in by a multiply before the top bits are used.
        let id = UInt64(pthread_self())
        return stripes[Int((id &* 0x9E37_79B9_7F4A_7C15) >> 58)]
    }

    /// The entry for `token`, if it was made at `generation`.
    func entry(for token: String, generation: UInt64) -> Entry? {
        stripe.state.withLock { state -> Entry? in
            // The last token is compared in constant time: a caller guessing a secret learns nothing from how far
            // its guess matched. A table lookup compares only tokens whose seeded hash matched, that is, equal ones.
            if let last = state.last, last.generation == generation, ConstantTime.equal(state.lastToken, token) {
                return last
            }
            guard let entry = state.entries[token], entry.generation == generation else { return nil }
            state.lastToken = token
            state.last = entry
            return entry
        }
    }

    func store(_ entry: Entry, for token: String) {
        stripe.state.withLock { state in
            if state.entries.count >= Self.stripeCapacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[token] = entry
            state.lastToken = token
            state.last = entry
        }
    }

    /// The parsed peer for `text`, made by `make` the first time (or when the generation moved).
    func peer(_ text: String, generation: UInt64, make: () -> PeerEntry) -> PeerEntry {
        let stripe = self.stripe
        if let found = stripe.state.withLock({ $0.peers[text] }), found.generation == generation { return found }
        let made = make()
        stripe.state.withLock { state in
            if state.peers.count >= Self.stripeCapacity { state.peers.removeAll(keepingCapacity: true) }
            state.peers[text] = made
        }
        return made
    }
}
