// The second of the two files that touch C directly: epoll, eventfd and timerfd, which Swift's
// Glibc module does not import. Same rules as System.swift: errno is read inside the wrapper.
internal import CCoinWatchSystem
internal import Glibc

/// Readiness bits as epoll reports them.
struct EpollEvents: OptionSet, Sendable {
    let rawValue: UInt32

    static let input = EpollEvents(rawValue: CW_SYS_EPOLLIN)
    static let output = EpollEvents(rawValue: CW_SYS_EPOLLOUT)
    static let error = EpollEvents(rawValue: CW_SYS_EPOLLERR)
    static let hangup = EpollEvents(rawValue: CW_SYS_EPOLLHUP)
    static let readHangup = EpollEvents(rawValue: CW_SYS_EPOLLRDHUP)
}

/// An epoll set and the descriptors a loop needs to drive it: an eventfd to be woken from other
/// threads and a timerfd (CLOCK_MONOTONIC) for the timer queue. Level-triggered throughout: a
/// handler reads once per event and is called again next tick if data is left, which keeps loops
/// fair and saves the extra EAGAIN read that edge-triggering needs.
///
/// Not thread-safe except `wake()`, which only writes the eventfd.
final class Epoll {
    let fd: Int32
    let wakeFD: Int32
    let timerFD: Int32
    private let events: UnsafeMutablePointer<cw_sys_epoll_event>
    let capacity: Int

    /// Epoll user data reserved for the eventfd and the timerfd (registrations use index+generation
    /// pairs whose generation is never 0xFFFF_FFFF).
    static let wakeToken: UInt64 = 0xFFFF_FFFF_0000_0000
    static let timerToken: UInt64 = 0xFFFF_FFFF_0000_0001

    init(capacity: Int = 256) throws(IOError) {
        self.capacity = min(capacity, Int(CW_SYS_EPOLL_MAX_EVENTS))
        let epfd = cw_sys_epoll_create()
        if epfd < 0 { throw IOError(errno: Glibc.errno, function: "epoll_create1") }
        let wake = cw_sys_eventfd_create()
        if wake < 0 {
            let code = Glibc.errno
            Sys.close(epfd)
            throw IOError(errno: code, function: "eventfd")
        }
        let timer = cw_sys_timerfd_create()
        if timer < 0 {
            let code = Glibc.errno
            Sys.close(epfd)
            Sys.close(wake)
            throw IOError(errno: code, function: "timerfd_create")
        }
        fd = epfd
        wakeFD = wake
        timerFD = timer
        events = .allocate(capacity: self.capacity)
        events.initialize(repeating: cw_sys_epoll_event(events: 0, data: 0), count: self.capacity)
        do {
            try control(CW_SYS_EPOLL_CTL_ADD, fd: wake, events: CW_SYS_EPOLLIN, data: Self.wakeToken)
            try control(CW_SYS_EPOLL_CTL_ADD, fd: timer, events: CW_SYS_EPOLLIN, data: Self.timerToken)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        // The eventfd outlives `close()`: other threads may still `wake()` a finished loop.
        Sys.close(wakeFD)
        events.deallocate()
    }

    /// Closes the epoll and timer descriptors; the owner calls it once, when its loop has finished. The eventfd
    /// stays open until this object is freed, so a thread that holds the loop can always write it, with no lock:
    /// its number cannot have been reused for another file.
    func close() {
        Sys.close(timerFD)
        Sys.close(fd)
    }

    // MARK: Registration

    func add(_ target: Int32, events: EpollEvents, data: UInt64) throws(IOError) {
        try control(CW_SYS_EPOLL_CTL_ADD, fd: target, events: events.rawValue, data: data)
    }

    func modify(_ target: Int32, events: EpollEvents, data: UInt64) throws(IOError) {
        try control(CW_SYS_EPOLL_CTL_MOD, fd: target, events: events.rawValue, data: data)
    }

    func remove(_ target: Int32) throws(IOError) {
        try control(CW_SYS_EPOLL_CTL_DEL, fd: target, events: 0, data: 0)
    }

    @inline(never)
    private func control(_ op: Int32, fd target: Int32, events: UInt32, data: UInt64) throws(IOError) {
        if cw_sys_epoll_ctl(fd, op, target, events, data) != 0 {
            let name = op == CW_SYS_EPOLL_CTL_ADD ? "epoll_ctl(ADD)" : op == CW_SYS_EPOLL_CTL_MOD
                ? "epoll_ctl(MOD)" : "epoll_ctl(DEL)"
            throw IOError(errno: Glibc.errno, function: name)
        }
    }

    // MARK: Waiting

    /// Waits for events (`timeoutMilliseconds` -1 = forever, 0 = poll); EINTR yields 0 events.
    @inline(never)
    func wait(timeoutMilliseconds: Int32) throws(IOError) -> Int {
        let n = cw_sys_epoll_wait(fd, events, Int32(capacity), timeoutMilliseconds)
        if n >= 0 { return Int(n) }
        let code = Glibc.errno
        if code == EINTR { return 0 }
        throw IOError(errno: code, function: "epoll_wait")
    }

    @inline(__always)
    func event(at index: Int) -> (events: EpollEvents, data: UInt64) {
        let event = events[index]
        return (EpollEvents(rawValue: event.events), event.data)
    }

    // MARK: eventfd

    /// Wakes a loop blocked in `wait`. Safe from any thread. EAGAIN (counter saturated) means a
    /// wake-up is already pending, which is all we need.
    @inline(never)
    func wake() {
        while cw_sys_eventfd_write(wakeFD, 1) != 0 && Glibc.errno == EINTR {}
    }

    /// Resets the eventfd after it fired.
    @inline(never)
    func drainWake() {
        var value: UInt64 = 0
        while cw_sys_eventfd_read(wakeFD, &value) != 0 && Glibc.errno == EINTR {}
    }

    // MARK: timerfd

    /// Arms the timerfd at an absolute CLOCK_MONOTONIC time; `nil` disarms it.
    @inline(never)
    func armTimer(deadline: Int64?) {
        // The arguments are always valid, so timerfd_settime can only fail on EINTR, which it does
        // not return; a failure here would be a programming error.
        let rc = cw_sys_timerfd_set_deadline(timerFD, max(deadline ?? 0, deadline == nil ? 0 : 1))
        assert(rc == 0, "timerfd_settime failed: \(Sys.errorMessage(Glibc.errno))")
    }

    /// Resets the timerfd after it fired.
    @inline(never)
    func drainTimer() {
        var value: UInt64 = 0
        while cw_sys_timerfd_read(timerFD, &value) != 0 && Glibc.errno == EINTR {}
    }
}
