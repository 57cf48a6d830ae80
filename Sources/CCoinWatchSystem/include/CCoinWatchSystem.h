// CCoinWatchSystem: thin wrappers over Linux calls that Swift's Glibc module does not import
// (epoll, eventfd, timerfd) or imports awkwardly (accept4 and socket flags, packed structs).
//
// Every symbol is prefixed `cw_sys_` / `CW_SYS_`. The header includes no system header on purpose:
// the structs below mirror the kernel ones and shim.c checks the mirrors with _Static_assert, so
// Swift never sees a packed struct or a macro.
//
// Unless stated otherwise a function returns what the wrapped call returns (-1 with errno set on
// failure) and never retries on EINTR: the Swift side retries, so it can read errno first.
#ifndef CCOINWATCHSYSTEM_H
#define CCOINWATCHSYSTEM_H

#include <stddef.h>
#include <stdint.h>

// MARK: epoll

/// Non-packed mirror of `struct epoll_event` (which is packed on x86_64 and so unreadable from Swift).
typedef struct cw_sys_epoll_event {
    uint32_t events;
    uint64_t data;
} cw_sys_epoll_event;

static const uint32_t CW_SYS_EPOLLIN = 0x001u;
static const uint32_t CW_SYS_EPOLLOUT = 0x004u;
static const uint32_t CW_SYS_EPOLLERR = 0x008u;
static const uint32_t CW_SYS_EPOLLHUP = 0x010u;
static const uint32_t CW_SYS_EPOLLRDHUP = 0x2000u;
static const uint32_t CW_SYS_EPOLLET = 0x80000000u;

static const int CW_SYS_EPOLL_CTL_ADD = 1;
static const int CW_SYS_EPOLL_CTL_DEL = 2;
static const int CW_SYS_EPOLL_CTL_MOD = 3;

/// Largest batch `cw_sys_epoll_wait` accepts (it converts through a stack array of this size).
static const int CW_SYS_EPOLL_MAX_EVENTS = 1024;

/// `epoll_create1(EPOLL_CLOEXEC)`.
int cw_sys_epoll_create(void);
/// `epoll_ctl` with the event built from `events` and the 64-bit user `data`; `events` and `data`
/// are ignored for CW_SYS_EPOLL_CTL_DEL.
int cw_sys_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
/// `epoll_wait` into the caller's non-packed array (maxevents is clamped to CW_SYS_EPOLL_MAX_EVENTS).
int cw_sys_epoll_wait(int epfd, cw_sys_epoll_event *events, int maxevents, int timeout_ms);

// MARK: eventfd

/// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`.
int cw_sys_eventfd_create(void);
/// Adds `value` to the counter: 0 on success, -1 with errno (EAGAIN if the counter would overflow).
int cw_sys_eventfd_write(int fd, uint64_t value);
/// Reads and resets the counter into `*value`: 0 on success, -1 with errno (EAGAIN if zero).
int cw_sys_eventfd_read(int fd, uint64_t *value);

// MARK: timerfd

/// `timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)`.
int cw_sys_timerfd_create(void);
/// Arms a one-shot timer at the absolute CLOCK_MONOTONIC time `deadline_ns` (a deadline in the past
/// fires at once); `deadline_ns <= 0` disarms it. Returns 0 or -1 with errno.
int cw_sys_timerfd_set_deadline(int fd, int64_t deadline_ns);
/// Reads the expiration count into `*expirations`: 0 on success, -1 with errno (EAGAIN if none).
int cw_sys_timerfd_read(int fd, uint64_t *expirations);

// MARK: threads

/// Names the calling thread (pthread_setname_np; at most 15 bytes are kept). Returns 0 or an errno.
int cw_sys_set_thread_name(const char *name);

/// The calling thread's nice value into `*nice` (getpriority on its thread id): 0 or an errno.
int cw_sys_thread_nice(int *nice);

/// Raises the calling thread's nice value by `increment` (setpriority on its thread id), so the scheduler
/// prefers other threads when the CPU is short: 0 or an errno.
int cw_sys_lower_thread_priority(int increment);

/// Moves the calling thread to SCHED_BATCH (sched_setscheduler on it), keeping its nice value: it gets the same
/// share of the CPU, but when woken it does not preempt the thread running on its core. 0 or an errno.
int cw_sys_use_batch_scheduling(void);

/// 1 when the calling thread is under SCHED_BATCH, 0 when under another policy, -1 with errno if unknown.
int cw_sys_thread_is_batch_scheduled(void);

/// CPUs in the calling thread's affinity mask (sched_getaffinity): what `taskset` or a cpuset
/// leaves this process, as opposed to the CPUs online. Returns the count or -1 with errno.
int cw_sys_affinity_cpu_count(void);

/// Starts writing back the dirty pages of `[offset, offset + length)` of `fd` without waiting
/// (sync_file_range with SYNC_FILE_RANGE_WRITE). Durability still needs fdatasync; this only lets the
/// device work while the caller does something else. Returns 0 or an errno.
int cw_sys_start_writeback(int fd, int64_t offset, int64_t length);

// MARK: sockets

/// `socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)`.
int cw_sys_tcp_socket(int family);
/// `accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)`: the peer address is not needed.
int cw_sys_accept4(int fd);
/// TCP_NODELAY on or off.
int cw_sys_set_tcp_nodelay(int fd, int on);
/// SO_REUSEADDR on or off.
int cw_sys_set_reuseaddr(int fd, int on);
/// SO_KEEPALIVE on or off.
int cw_sys_set_keepalive(int fd, int on);
/// Reads and clears SO_ERROR into `*error` (0 = no pending error). Returns 0 or -1 with errno.
int cw_sys_socket_error(int fd, int *error);
/// The local port of a bound socket (getsockname, IPv4 or IPv6), or -1 with errno.
int cw_sys_local_port(int fd);
/// Formats the peer address of a connected socket as "host:port" ("[v6]:port") into `out`
/// (NUL-terminated, truncated to `cap`). Returns 0 or -1 with errno.
int cw_sys_peer_name(int fd, char *out, size_t cap);
/// Formats the local address of a bound socket like `cw_sys_peer_name`. Returns 0 or -1 with errno.
int cw_sys_local_name(int fd, char *out, size_t cap);
/// Formats a sockaddr (IPv4 or IPv6) as "host:port" into `out`. Returns 0, or -1 if unknown family.
int cw_sys_format_address(const void *sockaddr, char *out, size_t cap);

/// Mirror of `struct iovec` with a const base (the buffers are only read by sendmsg).
typedef struct cw_sys_iovec {
    const void *base;
    size_t length;
} cw_sys_iovec;

/// Largest iovec count one call accepts (IOV_MAX).
static const int CW_SYS_IOV_MAX = 1024;

/// `sendmsg` of `iovcnt` buffers with MSG_NOSIGNAL | MSG_DONTWAIT: a closed peer yields EPIPE, never
/// SIGPIPE. Returns the byte count written (possibly short) or -1 with errno.
long cw_sys_sendv(int fd, const cw_sys_iovec *iov, int iovcnt);

#endif
