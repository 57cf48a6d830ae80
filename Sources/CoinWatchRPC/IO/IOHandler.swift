/// An object that owns a file descriptor registered with an ``EventLoop``.
///
/// The loop calls these methods on its own thread only. Registration is level-triggered: if a
/// handler leaves data unread, it is called again on the next loop iteration, so a handler may read
/// once per call and stay fair to the other descriptors of the loop.
public protocol IOHandler: AnyObject {
    /// The descriptor is readable, or the peer closed its side (a read will return end-of-file).
    func readable()
    /// The descriptor is writable (delivered only while ``IOInterest/write`` is in the interest set).
    func writable()
    /// The kernel reported a hang-up or an error condition that `readable()` did not consume.
    /// The handler should find out what happened (a read, `SO_ERROR`) and close.
    func hangup()
    /// The loop is stopping: close the descriptor now. The registration is already gone.
    func eventLoopStopping()
}

/// The readiness a handler wants to hear about.
public struct IOInterest: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Readable data, end-of-file, or peer half-close.
    public static let read = IOInterest(rawValue: 1)
    /// Room in the socket's send buffer. Arm it only while output is pending, or the loop spins.
    public static let write = IOInterest(rawValue: 2)

    var epollEvents: EpollEvents {
        var events: EpollEvents = []
        if contains(.read) { events.formUnion([.input, .readHangup]) }
        if contains(.write) { events.insert(.output) }
        return events
    }
}

/// A handle to a registration: a slot index and the slot's generation when it was registered.
///
/// The pair travels in the epoll user data, so an event that was already queued for a descriptor
/// closed earlier in the same batch finds a different generation in the slot and is dropped, even
/// if the slot has been reused.
public struct IORegistration: Hashable, Sendable {
    let index: UInt32
    let generation: UInt32

    var token: UInt64 {
        UInt64(generation) << 32 | UInt64(index)
    }

    init(index: UInt32, generation: UInt32) {
        self.index = index
        self.generation = generation
    }

    init(token: UInt64) {
        self.index = UInt32(truncatingIfNeeded: token)
        self.generation = UInt32(truncatingIfNeeded: token >> 32)
    }
}
