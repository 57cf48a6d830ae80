import Synchronization

/// Sessions a client may resume, by server, bounded. Holds one `SSL_SESSION` reference per entry.
final class ClientSessionCache: Sendable {
    /// Sessions kept at most; beyond it an arbitrary one is dropped (a client talks to few servers).
    static let capacity = 256
    private let sessions = Mutex<[String: OpaquePointerBox]>([:])

    deinit {
        sessions.withLock { sessions in
            for box in sessions.values { OpenSSLTLS.freeSession(box.pointer) }
        }
    }

    /// Keeps `session` (whose reference it takes over) for `key`, dropping the one kept before.
    func store(_ session: OpaquePointer, for key: String) {
        let replaced: OpaquePointer? = sessions.withLock { sessions in
            if sessions[key] == nil, sessions.count >= Self.capacity, let victim = sessions.keys.first {
                OpenSSLTLS.freeSession(sessions.removeValue(forKey: victim)!.pointer)
            }
            return sessions.updateValue(OpaquePointerBox(pointer: session), forKey: key)?.pointer
        }
        if let replaced { OpenSSLTLS.freeSession(replaced) }
    }

    /// Offers the session kept for `key`, if any, to `handles` (under the lock, so it cannot be freed meanwhile).
    func offer(for key: String, to handles: OpenSSLTLS.SessionHandles) {
        sessions.withLock { sessions in
            if let box = sessions[key] { OpenSSLTLS.offer(box.pointer, to: handles) }
        }
    }

    var count: Int { sessions.withLock { $0.count } }
}

/// An `SSL_SESSION` pointer kept under the cache's lock. OpenSSL sessions are reference-counted with atomic
/// counts and may be shared between threads once made.
struct OpaquePointerBox: @unchecked Sendable {
    var pointer: OpaquePointer
}
