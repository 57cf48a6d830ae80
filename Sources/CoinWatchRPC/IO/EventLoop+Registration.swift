/// The loop's table of registered handlers, indexed by the slot half of an ``IORegistration``.
///
/// Slots are reused through a free list; each reuse bumps the slot's generation so a stale token
/// (an event queued before the descriptor was closed) no longer matches.
struct HandlerTable {
    private struct Slot {
        var handler: (any IOHandler)?
        var fd: Int32
        var interest: IOInterest
        var generation: UInt32
    }

    private var slots: [Slot] = []
    private var freeSlots: [UInt32] = []
    private(set) var count = 0

    mutating func insert(_ handler: any IOHandler, fd: Int32, interest: IOInterest) -> IORegistration {
        count += 1
        if let index = freeSlots.popLast() {
            slots[Int(index)].handler = handler
            slots[Int(index)].fd = fd
            slots[Int(index)].interest = interest
            return IORegistration(index: index, generation: slots[Int(index)].generation)
        }
        slots.append(Slot(handler: handler, fd: fd, interest: interest, generation: 1))
        return IORegistration(index: UInt32(slots.count - 1), generation: 1)
    }

    @inline(__always)
    func isLive(_ registration: IORegistration) -> Bool {
        let index = Int(registration.index)
        return index < slots.count && slots[index].generation == registration.generation
            && slots[index].handler != nil
    }

    @inline(__always)
    func handler(for registration: IORegistration) -> (any IOHandler)? {
        let index = Int(registration.index)
        guard index < slots.count, slots[index].generation == registration.generation else { return nil }
        return slots[index].handler
    }

    func entry(for registration: IORegistration) -> (fd: Int32, interest: IOInterest)? {
        guard isLive(registration) else { return nil }
        let slot = slots[Int(registration.index)]
        return (slot.fd, slot.interest)
    }

    mutating func setInterest(_ interest: IOInterest, for registration: IORegistration) {
        slots[Int(registration.index)].interest = interest
    }

    /// Frees the slot; returns its descriptor if the registration was live.
    mutating func remove(_ registration: IORegistration) -> Int32? {
        guard isLive(registration) else { return nil }
        let index = Int(registration.index)
        let fd = slots[index].fd
        slots[index].handler = nil
        // 0xFFFF_FFFF is reserved for the loop's own tokens (see Epoll), 0 for "never registered".
        var next = slots[index].generation &+ 1
        if next == 0xFFFF_FFFF { next = 1 }
        slots[index].generation = next
        freeSlots.append(registration.index)
        count -= 1
        return fd
    }

    /// Empties the table, returning every live handler and its descriptor.
    mutating func removeAll() -> [(any IOHandler, Int32)] {
        let live = slots.compactMap { slot in slot.handler.map { ($0, slot.fd) } }
        slots.removeAll()
        freeSlots.removeAll()
        count = 0
        return live
    }
}

extension EventLoop {
    /// Adds `fd` to the loop's epoll set; `handler` is called on this loop when it is ready.
    ///
    /// The loop keeps a strong reference to `handler` until ``deregister(_:)``. The descriptor stays
    /// owned by the caller, who closes it after deregistering. Loop thread only.
    public func register(_ fd: Int32, interest: IOInterest, handler: any IOHandler) throws(IOError)
        -> IORegistration
    {
        assertInEventLoop()
        if isStopping { throw IOError.shutdown("EventLoop.register") }
        let registration = handlers.insert(handler, fd: fd, interest: interest)
        do {
            try epoll.add(fd, events: interest.epollEvents, data: registration.token)
        } catch {
            _ = handlers.remove(registration)
            throw error
        }
        return registration
    }

    /// Replaces the interest set (e.g. arm ``IOInterest/write`` while output is pending). A call with
    /// the current set costs no syscall. Loop thread only.
    public func setInterest(_ interest: IOInterest, for registration: IORegistration) throws(IOError) {
        assertInEventLoop()
        guard let entry = handlers.entry(for: registration), entry.interest != interest else { return }
        try epoll.modify(entry.fd, events: interest.epollEvents, data: registration.token)
        handlers.setInterest(interest, for: registration)
    }

    /// Removes the registration; events already queued for it are ignored. Does not close the
    /// descriptor. A stale or repeated call does nothing. Loop thread only.
    public func deregister(_ registration: IORegistration) {
        assertInEventLoop()
        guard let fd = handlers.remove(registration) else { return }
        // Failure means the descriptor is already gone from the set, which is what we want.
        try? epoll.remove(fd)
    }

    /// Number of live registrations (for diagnostics and tests). Loop thread only.
    public var registrationCount: Int {
        assertInEventLoop()
        return handlers.count
    }
}
