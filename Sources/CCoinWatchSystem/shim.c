// Thin wrappers declared in CCoinWatchSystem.h. Each quotes the contract of the call it wraps.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // sync_file_range(2), sched_getaffinity(2), CPU_COUNT_S
#endif
#include "CCoinWatchSystem.h"

#include <fcntl.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

// MARK: layout checks for everything the header mirrors

_Static_assert(EPOLLIN == 0x001, "EPOLLIN mirror");
_Static_assert(EPOLLOUT == 0x004, "EPOLLOUT mirror");
_Static_assert(EPOLLERR == 0x008, "EPOLLERR mirror");
_Static_assert(EPOLLHUP == 0x010, "EPOLLHUP mirror");
_Static_assert(EPOLLRDHUP == 0x2000, "EPOLLRDHUP mirror");
_Static_assert((uint32_t)EPOLLET == 0x80000000u, "EPOLLET mirror");
_Static_assert(EPOLL_CTL_ADD == 1 && EPOLL_CTL_DEL == 2 && EPOLL_CTL_MOD == 3, "EPOLL_CTL mirror");
_Static_assert(sizeof(((struct epoll_event *)0)->data) == sizeof(uint64_t), "epoll_data is 64 bits");
_Static_assert(IOV_MAX == 1024, "IOV_MAX mirror");
_Static_assert(sizeof(cw_sys_iovec) == sizeof(struct iovec), "iovec mirror size");
_Static_assert(offsetof(cw_sys_iovec, base) == offsetof(struct iovec, iov_base), "iovec base");
_Static_assert(offsetof(cw_sys_iovec, length) == offsetof(struct iovec, iov_len), "iovec length");
_Static_assert(sizeof(((struct iovec *)0)->iov_len) == sizeof(size_t), "iov_len is size_t");

// MARK: epoll

int cw_sys_epoll_create(void) {
    // epoll_create1(2): returns a new epoll fd owned by the caller (close it), or -1 with errno.
    return epoll_create1(EPOLL_CLOEXEC);
}

int cw_sys_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    // epoll_ctl(2): the kernel copies the event; for EPOLL_CTL_DEL the event may be NULL (>= 2.6.9).
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = events;
    event.data.u64 = data;
    return epoll_ctl(epfd, op, fd, op == EPOLL_CTL_DEL ? NULL : &event);
}

int cw_sys_epoll_wait(int epfd, cw_sys_epoll_event *events, int maxevents, int timeout_ms) {
    // epoll_wait(2) fills at most maxevents packed structs; we copy them field by field into the
    // caller's non-packed mirror so Swift never reads a misaligned uint64_t.
    struct epoll_event packed[CW_SYS_EPOLL_MAX_EVENTS];
    if (maxevents > CW_SYS_EPOLL_MAX_EVENTS) maxevents = CW_SYS_EPOLL_MAX_EVENTS;
    if (maxevents < 1) maxevents = 1;
    int n = epoll_wait(epfd, packed, maxevents, timeout_ms);
    for (int i = 0; i < n; i++) {
        events[i].events = packed[i].events;
        events[i].data = packed[i].data.u64;
    }
    return n;
}

// MARK: eventfd

int cw_sys_eventfd_create(void) {
    // eventfd(2): returns a new fd owned by the caller, or -1 with errno.
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

int cw_sys_eventfd_write(int fd, uint64_t value) {
    // eventfd(2): a write must be exactly 8 bytes; EAGAIN if the counter would exceed 2^64-2.
    ssize_t n = write(fd, &value, sizeof value);
    return n == (ssize_t)sizeof value ? 0 : -1;
}

int cw_sys_eventfd_read(int fd, uint64_t *value) {
    // eventfd(2): a read of 8 bytes returns the counter and resets it to 0; EAGAIN when it is 0.
    ssize_t n = read(fd, value, sizeof *value);
    return n == (ssize_t)sizeof *value ? 0 : -1;
}

// MARK: timerfd and clock

int cw_sys_timerfd_create(void) {
    // timerfd_create(2): returns a new fd owned by the caller, or -1 with errno.
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int cw_sys_timerfd_set_deadline(int fd, int64_t deadline_ns) {
    // timerfd_settime(2): an all-zero it_value disarms; with TFD_TIMER_ABSTIME, a time already in
    // the past expires immediately. it_interval zero means one-shot.
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    if (deadline_ns > 0) {
        spec.it_value.tv_sec = (time_t)(deadline_ns / 1000000000);
        spec.it_value.tv_nsec = (long)(deadline_ns % 1000000000);
    }
    return timerfd_settime(fd, deadline_ns > 0 ? TFD_TIMER_ABSTIME : 0, &spec, NULL);
}

int cw_sys_timerfd_read(int fd, uint64_t *expirations) {
    // timerfd_create(2): a read of 8 bytes returns the expirations since the last read; EAGAIN if 0.
    ssize_t n = read(fd, expirations, sizeof *expirations);
    return n == (ssize_t)sizeof *expirations ? 0 : -1;
}

// MARK: threads

int cw_sys_thread_nice(int *nice) {
    // getpriority(2): -1 is a valid nice value, so errno is cleared first and checked after. On Linux a
    // nice value belongs to a thread, named by its id (gettid(2)) under PRIO_PROCESS.
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int value = getpriority(PRIO_PROCESS, (id_t)tid);
    if (value == -1 && errno != 0) return errno;
    *nice = value;
    return 0;
}

int cw_sys_lower_thread_priority(int increment) {
    // setpriority(2): PRIO_PROCESS with a thread id sets that thread's nice value alone (Linux keeps it per
    // thread, a departure from POSIX its man page documents). Raising one's own nice value needs no privilege.
    int current;
    int rc = cw_sys_thread_nice(&current);
    if (rc != 0) return rc;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    return setpriority(PRIO_PROCESS, (id_t)tid, current + increment) == 0 ? 0 : errno;
}

int cw_sys_use_batch_scheduling(void) {
    // sched_setscheduler(2): with pid 0 the calling thread's policy is set (Linux keeps it per thread).
    // SCHED_BATCH takes a static priority of 0, keeps the nice value, and needs no privilege to enter from
    // SCHED_OTHER; the scheduler "will apply a small scheduling penalty with respect to wakeup behavior".
    struct sched_param param = {.sched_priority = 0};
    return sched_setscheduler(0, SCHED_BATCH, &param) == 0 ? 0 : errno;
}

int cw_sys_thread_is_batch_scheduled(void) {
    // sched_getscheduler(2): with pid 0, the calling thread's policy.
    int policy = sched_getscheduler(0);
    if (policy == -1) return -1;
    return policy == SCHED_BATCH ? 1 : 0;
}

int cw_sys_set_thread_name(const char *name) {
    // pthread_setname_np(3): the name is copied; longer than 15 bytes fails with ERANGE, so we
    // truncate to fit.
    char shortName[16];
    snprintf(shortName, sizeof shortName, "%s", name);
    return pthread_setname_np(pthread_self(), shortName);
}

int cw_sys_affinity_cpu_count(void) {
    // sched_getaffinity(2): fails with EINVAL when the mask is smaller than the kernel's, so grow
    // it (CPU_ALLOC(3); the caller frees with CPU_FREE) until it fits, up to 64k CPUs.
    for (int cpus = 1024; cpus <= 65536; cpus *= 2) {
        cpu_set_t *set = CPU_ALLOC(cpus);
        if (set == NULL) return -1;
        size_t size = CPU_ALLOC_SIZE(cpus);
        if (sched_getaffinity(0, size, set) == 0) {
            int count = CPU_COUNT_S(size, set);
            CPU_FREE(set);
            return count;
        }
        int saved = errno;
        CPU_FREE(set);
        if (saved != EINVAL) {
            errno = saved;
            return -1;
        }
    }
    errno = EINVAL;
    return -1;
}

// MARK: sockets

int cw_sys_tcp_socket(int family) {
    // socket(2): returns a new fd owned by the caller, or -1 with errno.
    return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

int cw_sys_accept4(int fd) {
    // accept4(2): returns a new connected fd owned by the caller; EAGAIN when the queue is empty;
    // ECONNABORTED and network errors of the new connection are reported here too.
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

static int cw_sys_set_int_option(int fd, int level, int name, int value) {
    // setsockopt(2): the kernel copies optval.
    return setsockopt(fd, level, name, &value, sizeof value);
}

int cw_sys_set_tcp_nodelay(int fd, int on) { return cw_sys_set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, on != 0); }
int cw_sys_set_reuseaddr(int fd, int on) { return cw_sys_set_int_option(fd, SOL_SOCKET, SO_REUSEADDR, on != 0); }
int cw_sys_set_keepalive(int fd, int on) { return cw_sys_set_int_option(fd, SOL_SOCKET, SO_KEEPALIVE, on != 0); }

int cw_sys_socket_error(int fd, int *error) {
    // getsockopt(2) SO_ERROR: returns the pending error and clears it.
    socklen_t length = sizeof *error;
    return getsockopt(fd, SOL_SOCKET, SO_ERROR, error, &length);
}

int cw_sys_local_port(int fd) {
    // getsockname(2): fills at most `length` bytes of the caller's storage.
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) return -1;
    if (address.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&address)->sin_port);
    if (address.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&address)->sin6_port);
    errno = EAFNOSUPPORT;
    return -1;
}

int cw_sys_format_address(const void *sockaddr, char *out, size_t cap) {
    // inet_ntop(3) writes a NUL-terminated string into the caller's buffer.
    char host[INET6_ADDRSTRLEN];
    const struct sockaddr *address = sockaddr;
    if (cap == 0) return -1;
    if (address->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = sockaddr;
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
        snprintf(out, cap, "%s:%u", host, (unsigned)ntohs(v4->sin_port));
        return 0;
    }
    if (address->sa_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = sockaddr;
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        snprintf(out, cap, "[%s]:%u", host, (unsigned)ntohs(v6->sin6_port));
        return 0;
    }
    out[0] = 0;
    return -1;
}

int cw_sys_peer_name(int fd, char *out, size_t cap) {
    // getpeername(2): fills at most `length` bytes; ENOTCONN if the peer is gone.
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getpeername(fd, (struct sockaddr *)&address, &length) != 0) return -1;
    if (cw_sys_format_address(&address, out, cap) != 0) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    return 0;
}

int cw_sys_local_name(int fd, char *out, size_t cap) {
    // getsockname(2): fills at most `length` bytes of the caller's storage.
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) return -1;
    if (cw_sys_format_address(&address, out, cap) != 0) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    return 0;
}

long cw_sys_sendv(int fd, const cw_sys_iovec *iov, int iovcnt) {
    // sendmsg(2): reads the buffers, never keeps them; MSG_NOSIGNAL turns SIGPIPE into EPIPE.
    // The cast drops const only because msghdr's iov_base is non-const; sendmsg does not write.
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = (struct iovec *)(void *)iov;
    message.msg_iovlen = (size_t)iovcnt;
    return (long)sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
}

int cw_sys_start_writeback(int fd, int64_t offset, int64_t length) {
    // sync_file_range(2), SYNC_FILE_RANGE_WRITE: starts write-out of the range's dirty pages and returns; it
    // makes nothing durable (no metadata, no device cache flush), which fdatasync(2) does afterwards.
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
}
