#ifndef CUNWIND_H
#define CUNWIND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Loads libunwind (once) with `dlopen(RTLD_LOCAL)`, so that its exports (a weak
/// `backtrace`, the `_Unwind_*` family) never replace glibc's and libgcc's in the host.
/// Returns 1 when `unw_backtrace` is available, 0 otherwise (see the problem text).
/// The corresponding C functions are `dlopen` and `dlsym`.
int cunwind_load_unwinder(void);

/// Why libunwind could not be loaded (empty when it was).
const char *cunwind_unwinder_problem(void);

/// Captures up to `capacity` return addresses of the calling thread into `buffer`,
/// innermost first. Returns the number written (0 when unwinding fails).
/// The corresponding C function is libunwind's `unw_backtrace` (local-only fast path).
int cunwind_backtrace(void **buffer, int capacity);

/// Captures the stack of the caller's caller's ... caller: the frames above the Swift
/// function that called this one, minus `skip_above_caller` more frames, up to `capacity`
/// return addresses. The cut is found by address (`__builtin_return_address`), so it does
/// not depend on how the compiler inlined the shim. Returns the number written.
/// The corresponding C function is libunwind's `unw_backtrace`.
int cunwind_backtrace_above_caller(uintptr_t *buffer, int capacity, int skip_above_caller);

/// The calling thread's OS thread id (`gettid`), cached per thread (and reset in a forked
/// child), so the hot path pays no system call.
int64_t cunwind_thread_id(void);

/// The calling thread's name (`pthread_getname_np`), at most 15 bytes plus NUL.
void cunwind_thread_name(char *buffer, size_t capacity);

/// Names the calling thread (`pthread_setname_np`; at most 15 bytes are kept).
void cunwind_set_thread_name(const char *name);

/// The strong retain count of the Swift object at `object`, read without retaining it.
/// The corresponding C function is the runtime's `swift_retainCount`.
intptr_t cunwind_retain_count(const void *object);

/// Zeroes the calling thread's dead stack just below the caller's frame (at most 64 KiB,
/// never closer than 32 KiB to the thread's stack limit), so that addresses that the
/// recorder's finished calls left in stack slots there cannot look like holders to a later
/// reference scan from another thread (issue 10). The stack bounds are read once per thread
/// (`pthread_getattr_np`). Costs a `memset` of the region; only called with holders on.
void cunwind_scrub_dead_stack(void);

/// Monotonic clock in nanoseconds (`clock_gettime(CLOCK_MONOTONIC)`).
uint64_t cunwind_monotonic_ns(void);

/// What the enqueue path's first half (`prepare`, outside the queue lock) leaves for its
/// second half (`commit`, inside it), per thread, so the queue carries only an id between
/// them.
typedef struct {
  uint64_t time;
  uintptr_t address;
  const void *metatype;
  intptr_t retain_count;
  int64_t frame_count;
  const void *session;
  uintptr_t frames[256];
} cunwind_pending_enqueue;

/// The calling thread's pending enqueue.
cunwind_pending_enqueue *cunwind_thread_pending(void);

/// The session generation this thread last announced itself in (a `thread` record), and
/// the setter. Per-thread, so the hot path checks it without a lock.
uint64_t cunwind_thread_announced(void);
void cunwind_set_thread_announced(uint64_t generation);

/// Whether this thread is the tracer's writer thread (which must never wait for itself).
int cunwind_is_writer_thread(void);
void cunwind_set_writer_thread(int flag);

/// The tracing switch: one relaxed load, inlined into the queue's enqueue path.
extern int cunwind_tracing_flag;
static inline int cunwind_tracing_is_on(void) {
  return __atomic_load_n(&cunwind_tracing_flag, __ATOMIC_RELAXED);
}
void cunwind_set_tracing(int on);

/// The recording session (an unmanaged Swift object), published for the hot path: a plain
/// C global, so reading it costs one acquire load and no lazy-initialisation check.
extern void *cunwind_session_pointer;
static inline void *cunwind_current_session(void) {
  return __atomic_load_n(&cunwind_session_pointer, __ATOMIC_ACQUIRE);
}
void cunwind_set_current_session(void *session);

/// The session started last in this process, recording or not (cleared in a forked child),
/// so that a release of an object it traced can still be refused and counted after
/// `finish()` unpublished it.
extern void *cunwind_latest_session_pointer;
static inline void *cunwind_latest_session(void) {
  return __atomic_load_n(&cunwind_latest_session_pointer, __ATOMIC_ACQUIRE);
}
void cunwind_set_latest_session(void *session);

/// Object ids, unique in the process: returns the next one (the first is 1).
extern uint64_t cunwind_object_id_counter;
static inline uint64_t cunwind_next_object_id(void) {
  return __atomic_add_fetch(&cunwind_object_id_counter, 1, __ATOMIC_RELAXED);
}
static inline uint64_t cunwind_peek_next_object_id(void) {
  return __atomic_load_n(&cunwind_object_id_counter, __ATOMIC_RELAXED) + 1;
}

/// Registers (once) a fork handler that switches tracing off in the child and resets the
/// cached thread id: a forked child must never write into its parent's log.
void cunwind_install_fork_handler(void);

/// What `cunwind_describe_address` found.
enum { CUNWIND_FOUND_MODULE = 1, CUNWIND_FOUND_SYMBOL = 2 };

/// Describes code address `ip` (use `ip - 1` for return addresses): the loaded object that
/// contains it (its path, the executable's for the main program, into `module`, its load
/// base into `base`) and the nearest function symbol at or below it, demangled when it is a
/// Swift name. Returns a combination of the `CUNWIND_FOUND_…` flags (0: no object holds it).
/// Each object's symbol tables (`.symtab` and `.dynsym`) are read once and kept, so only
/// the first address in an object pays for reading them. Symbol lookup follows libunwind's
/// `unw_get_proc_name` rule, except that an address past the end of the nearest symbol
/// (`st_size`) gets no symbol: in a stripped library the nearest exported name below a
/// static function is a neighbour's. C++ names are demangled with `__cxa_demangle`.
/// The corresponding C functions are `dl_iterate_phdr`, the runtime's `swift_demangle` and
/// the C++ ABI's `__cxa_demangle` (found with `dlsym`).
int cunwind_describe_address(uintptr_t ip, char *module, size_t module_capacity,
                             uintptr_t *base, char *symbol, size_t symbol_capacity);

/// Takes an exclusive, non-blocking `flock` on `fd`: 1 on success, 0 when another open
/// file description holds it, -1 on other errors.
int cunwind_try_lock(int fd);

/// Opens `path` for appending with `O_CREAT | O_CLOEXEC | O_NOFOLLOW` (and `O_EXCL` when
/// `exclusive`), mode 0600. The open itself is non-blocking, so a FIFO without a reader
/// fails with `ENXIO` instead of hanging; the descriptor returned is blocking.
/// Returns the descriptor or -1 with `errno` set.
int cunwind_open_log(const char *path, int exclusive);

/// 1 when `fd` is a regular file, 0 for anything else (device, FIFO, socket), -1 on error.
/// The corresponding C function is `fstat`.
int cunwind_is_regular_file(int fd);

/// `errno` of the last failed call on this thread.
int cunwind_errno(void);

/// Writes all of `length` bytes, retrying on short writes and `EINTR`. 0 or -1 (errno set).
int cunwind_write_all(int fd, const void *bytes, size_t length);

/// Writes all of `length` bytes to the log like `cunwind_write_all`, but a write that the
/// kernel answers with a signal (`SIGXFSZ` past `RLIMIT_FSIZE`, `SIGPIPE` on a pipe whose
/// reader left) fails with `EFBIG` or `EPIPE` instead of raising it in the host. Why: the
/// default action of both signals kills the process, and the recorder must never do that.
/// How: both signals are blocked on the calling thread for the write (the kernel sends them
/// to the writing thread), a signal the failed write left pending is taken back with
/// `sigtimedwait`, and the thread's mask is restored. The host's dispositions are never
/// touched; the trade-off is two `pthread_sigmask` calls and a `sigpending` per write,
/// which the writer pays once per batch. A signal of the same kind that was already
/// pending before the write (the host's own) is left alone.
/// The corresponding C functions are `write`, `pthread_sigmask` and `sigtimedwait`.
int cunwind_write_log(int fd, const void *bytes, size_t length);

/// Blocks `SIGXFSZ` and `SIGPIPE` on the calling thread for good: the writer thread's mask,
/// so that a signal raised by any write of it stays with it (and dies with it) instead of
/// killing the host. The corresponding C function is `pthread_sigmask`.
void cunwind_block_write_signals(void);

#ifdef __cplusplus
}
#endif

#endif
