#ifndef CTRACERUNTIME_H
#define CTRACERUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// The recorder's C state: what the hot path reads without a lock or a `swift_once` (the
// session pointers, the id counter, per-thread state), what must be async-signal-safe (the
// fork handler), and the log file's system calls.

// MARK: Session

/// The recording session (an unmanaged Swift object), published for the hot path: a plain
/// C global, so reading it costs one acquire load and no lazy-initialisation check.
extern void *ctrace_session_pointer;
static inline void *ctrace_current_session(void) {
  return __atomic_load_n(&ctrace_session_pointer, __ATOMIC_ACQUIRE);
}
void ctrace_set_current_session(void *session);

/// The session started last in this process, recording or not (cleared in a forked child),
/// so that a release of an object it traced can still be refused and counted after
/// `finish()` unpublished it.
extern void *ctrace_latest_session_pointer;
static inline void *ctrace_latest_session(void) {
  return __atomic_load_n(&ctrace_latest_session_pointer, __ATOMIC_ACQUIRE);
}
void ctrace_set_latest_session(void *session);

/// Object ids, unique in the process: returns the next one (the first is 1).
///
/// Sequentially consistent, as are the session pointer's store and
/// `ctrace_session_still_current`: an enqueue that takes its id and then still finds its
/// session published took an id below the next session's `firstID` (that session peeks the
/// counter only after this one was unpublished), so a release is never offered to a session
/// that did not see its enqueue. On x86-64 this costs the hot path nothing: a locked add and
/// a plain load either way.
extern uint64_t ctrace_object_id_counter;
static inline uint64_t ctrace_next_object_id(void) {
  return __atomic_add_fetch(&ctrace_object_id_counter, 1, __ATOMIC_SEQ_CST);
}
static inline uint64_t ctrace_peek_next_object_id(void) {
  return __atomic_load_n(&ctrace_object_id_counter, __ATOMIC_SEQ_CST) + 1;
}
/// Whether `session` is still the published one, read after an id was taken (see above).
static inline int ctrace_session_still_current(const void *session) {
  return __atomic_load_n(&ctrace_session_pointer, __ATOMIC_SEQ_CST) == session;
}

/// Tests only: called on the traced enqueue path after the session was loaded and before the
/// id is taken, so a test can finish and restart sessions in that window. NULL in every real
/// run: one predictable branch.
extern void (*ctrace_test_before_enqueue_id_hook)(void);
static inline void ctrace_test_before_enqueue_id(void) {
  void (*hook)(void) = __atomic_load_n(&ctrace_test_before_enqueue_id_hook, __ATOMIC_RELAXED);
  if (__builtin_expect(hook != NULL, 0)) hook();
}
void ctrace_set_test_before_enqueue_id(void (*hook)(void));

/// Tests only: called by the writer of a closing session once its buffer is closed, before it
/// waits for releases under way, so a test can hold a release back until the buffer refuses
/// it. NULL in every real run: one predictable branch, once per session.
extern void (*ctrace_test_before_release_wait_hook)(void);
static inline void ctrace_test_before_release_wait(void) {
  void (*hook)(void) = __atomic_load_n(&ctrace_test_before_release_wait_hook, __ATOMIC_RELAXED);
  if (__builtin_expect(hook != NULL, 0)) hook();
}
void ctrace_set_test_before_release_wait(void (*hook)(void));

/// Registers (once) a fork handler that switches tracing off in the child and resets the
/// cached thread id: a forked child must never write into its parent's log.
/// The corresponding C function is `pthread_atfork`.
void ctrace_install_fork_handler(void);

/// Monotonic clock in nanoseconds (`clock_gettime(CLOCK_MONOTONIC)`).
uint64_t ctrace_monotonic_ns(void);

/// The strong retain count of the Swift object at `object`, read without retaining it.
/// The corresponding C function is the runtime's `swift_retainCount`.
intptr_t ctrace_retain_count(const void *object);

// MARK: Thread

/// The calling thread's OS thread id (`gettid`), cached per thread (and reset in a forked
/// child), so the hot path pays no system call.
int64_t ctrace_thread_id(void);

/// The calling thread's name (`pthread_getname_np`), at most 15 bytes plus NUL.
void ctrace_thread_name(char *buffer, size_t capacity);

/// Names the calling thread (`pthread_setname_np`; at most 15 bytes are kept).
void ctrace_set_thread_name(const char *name);

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
} ctrace_pending_enqueue;

/// The calling thread's pending enqueue.
ctrace_pending_enqueue *ctrace_thread_pending(void);

/// The session generation this thread last announced itself in (a `thread` record), and
/// the setter. Per-thread, so the hot path checks it without a lock.
uint64_t ctrace_thread_announced(void);
void ctrace_set_thread_announced(uint64_t generation);

/// Whether this thread is the tracer's writer thread (which must never wait for itself).
int ctrace_is_writer_thread(void);
void ctrace_set_writer_thread(int flag);

/// Zeroes the calling thread's dead stack just below the caller's frame (at most 64 KiB,
/// never closer than 32 KiB to the thread's stack limit), so that addresses that the
/// recorder's finished calls left in stack slots there cannot look like holders to a later
/// reference scan from another thread (issue 10). The stack bounds are read once per thread
/// (`pthread_getattr_np`). Costs a `memset` of the region; only called with holders on.
void ctrace_scrub_dead_stack(void);

// MARK: Log file

/// Takes an exclusive, non-blocking `flock` on `fd`: 1 on success, 0 when another open
/// file description holds it, -1 on other errors.
int ctrace_try_lock(int fd);

/// Opens `path` for appending with `O_CREAT | O_CLOEXEC | O_NOFOLLOW` (and `O_EXCL` when
/// `exclusive`), mode 0600. The open itself is non-blocking, so a FIFO without a reader
/// fails with `ENXIO` instead of hanging; the descriptor returned is blocking.
/// Returns the descriptor or -1 with `errno` set.
int ctrace_open_log(const char *path, int exclusive);

/// 1 when `fd` is a regular file, 0 for anything else (device, FIFO, socket), -1 on error.
/// The corresponding C function is `fstat`.
int ctrace_is_regular_file(int fd);

/// `errno` of the last failed call on this thread.
int ctrace_errno(void);

/// Writes all of `length` bytes, retrying on short writes and `EINTR`. 0 or -1 (errno set).
int ctrace_write_all(int fd, const void *bytes, size_t length);

/// Writes all of `length` bytes to the log like `ctrace_write_all`, but a write that the
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
int ctrace_write_log(int fd, const void *bytes, size_t length);

/// Blocks `SIGXFSZ` and `SIGPIPE` on the calling thread for good: the writer thread's mask,
/// so that a signal raised by any write of it stays with it (and dies with it) instead of
/// killing the host. The corresponding C function is `pthread_sigmask`.
void ctrace_block_write_signals(void);

// MARK: Address space

/// The address-space limit (`RLIMIT_AS`, `ulimit -v`) in bytes; 0 when there is none.
uint64_t ctrace_address_space_limit(void);

/// The bytes of address space the process has mapped now (`/proc/self/statm`); 0 unknown.
uint64_t ctrace_address_space_used(void);

/// Starts `body(context)` on a detached thread whose stack is `stack_size` bytes (0: the
/// default, RLIMIT_STACK's 8 MiB as a rule). Returns 0 or the error of `pthread_create`.
int ctrace_start_thread(void *(*body)(void *), void *context, size_t stack_size);

#ifdef __cplusplus
}
#endif

#endif
