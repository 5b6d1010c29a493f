#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// The header (Debian's libunwind-dev) gives the prototype that the loaded entry point must
// have; UNW_LOCAL_ONLY binds its names to the fast local-process versions. Nothing here
// references a libunwind symbol at link time: `__typeof__` does not.
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "CUnwind.h"

extern size_t swift_retainCount(const void *object);

int cunwind_tracing_flag = 0;
void *cunwind_session_pointer = NULL;
uint64_t cunwind_object_id_counter = 0;

void *cunwind_latest_session_pointer = NULL;

void cunwind_set_current_session(void *session) {
  __atomic_store_n(&cunwind_session_pointer, session, __ATOMIC_RELEASE);
}

void cunwind_set_latest_session(void *session) {
  __atomic_store_n(&cunwind_latest_session_pointer, session, __ATOMIC_RELEASE);
}

intptr_t cunwind_retain_count(const void *object) { return (intptr_t)swift_retainCount(object); }

static __thread int64_t cached_thread_id = 0;
static __thread cunwind_pending_enqueue thread_pending;
static __thread uint64_t thread_announced = 0;
static __thread int writer_thread = 0;

// libunwind is loaded with dlopen(RTLD_LOCAL), never linked: linked, libunwind.so.8 sits
// before libc and libgcc_s in the global lookup scope, and its weak `backtrace` and its
// `_Unwind_*` family then replace glibc's and libgcc's in the whole host process (measured
// with LD_DEBUG=bindings: libstdc++'s exceptions, libgcc_s itself and Foundation's
// `backtrace` all bound to libunwind). Loaded locally, only `unw_backtrace` is reached, and
// only through this pointer.
typedef __typeof__(&unw_backtrace) cunwind_backtrace_function;
static cunwind_backtrace_function unwinder = NULL;
static pthread_once_t unwinder_once = PTHREAD_ONCE_INIT;
static char unwinder_problem[512];

static void load_unwinder(void) {
  void *library = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *reason = dlerror();
    snprintf(unwinder_problem, sizeof unwinder_problem, "%s", reason ? reason : "dlopen failed");
    return;
  }
  void *function = dlsym(library, "unw_backtrace");
  if (function == NULL) {
    snprintf(unwinder_problem, sizeof unwinder_problem, "libunwind.so.8 has no unw_backtrace");
    return;
  }
  __atomic_store_n(&unwinder, (cunwind_backtrace_function)function, __ATOMIC_RELEASE);
}

int cunwind_load_unwinder(void) {
  pthread_once(&unwinder_once, load_unwinder);
  return __atomic_load_n(&unwinder, __ATOMIC_ACQUIRE) != NULL;
}

const char *cunwind_unwinder_problem(void) { return unwinder_problem; }

static inline cunwind_backtrace_function current_unwinder(void) {
  cunwind_backtrace_function function = __atomic_load_n(&unwinder, __ATOMIC_ACQUIRE);
  if (__builtin_expect(function == NULL, 0)) {
    if (!cunwind_load_unwinder()) return NULL;
    function = __atomic_load_n(&unwinder, __ATOMIC_ACQUIRE);
  }
  return function;
}

int cunwind_backtrace(void **buffer, int capacity) {
  if (capacity <= 0) return 0;
  cunwind_backtrace_function function = current_unwinder();
  if (function == NULL) return 0;
  int n = function(buffer, capacity);
  return n < 0 ? 0 : n;
}

__attribute__((noinline)) int cunwind_backtrace_above_caller(uintptr_t *buffer, int capacity,
                                                             int skip_above_caller) {
  if (capacity <= 0) return 0;
  // The caller's frame is normally at index 1 (index 0 is this function); `slack` bounds
  // the search for it, but only two extra frames are unwound: every frame costs ~7 ns.
  enum { slack = 8 };
  void *raw[256 + slack];
  int want = capacity + skip_above_caller + 2;
  if (want > 256 + slack) want = 256 + slack;
  cunwind_backtrace_function function = current_unwinder();
  if (function == NULL) return 0;
  int n = function(raw, want);
  if (n <= 0) return 0;
  void *caller = __builtin_return_address(0);
  int start = -1;
  for (int i = 0; i < n && i < slack; i++) {
    if (raw[i] == caller) {
      start = i;
      break;
    }
  }
  if (start < 0) start = 1;  // Unreachable in practice; keep the frames rather than none.
  start += 1 + skip_above_caller;
  int count = 0;
  for (int i = start; i < n && count < capacity; i++) buffer[count++] = (uintptr_t)raw[i];
  return count;
}

int64_t cunwind_thread_id(void) {
  int64_t tid = cached_thread_id;
  if (tid == 0) {
    tid = (int64_t)syscall(SYS_gettid);
    cached_thread_id = tid;
  }
  return tid;
}

void cunwind_thread_name(char *buffer, size_t capacity) {
  if (capacity == 0) return;
  buffer[0] = 0;
  if (pthread_getname_np(pthread_self(), buffer, capacity) != 0) buffer[0] = 0;
}

void cunwind_set_thread_name(const char *name) { pthread_setname_np(pthread_self(), name); }

// How much dead stack a scrub clears, and how far from the stack's limit it stays.
#define SCRUB_BYTES (64 * 1024)
#define SCRUB_MARGIN (32 * 1024)
static __thread uintptr_t thread_stack_low = 0;

__attribute__((noinline)) static void scrub_region(size_t bytes) {
  char region[bytes];
  explicit_bzero(region, bytes);
  __asm__ volatile("" : : "r"(region) : "memory");
}

__attribute__((noinline)) void cunwind_scrub_dead_stack(void) {
  if (thread_stack_low == 0) {
    pthread_attr_t attributes;
    void *low = NULL;
    size_t size = 0;
    thread_stack_low = 1;  // unknown: never scrub
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
      if (pthread_attr_getstack(&attributes, &low, &size) == 0 && low != NULL) {
        thread_stack_low = (uintptr_t)low;
      }
      pthread_attr_destroy(&attributes);
    }
  }
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  if (thread_stack_low <= 1 || here < thread_stack_low + SCRUB_MARGIN + 4096) return;
  size_t room = here - thread_stack_low - SCRUB_MARGIN;
  scrub_region(room < SCRUB_BYTES ? room : SCRUB_BYTES);
}

uint64_t cunwind_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

cunwind_pending_enqueue *cunwind_thread_pending(void) { return &thread_pending; }

uint64_t cunwind_thread_announced(void) { return thread_announced; }
void cunwind_set_thread_announced(uint64_t generation) { thread_announced = generation; }

int cunwind_is_writer_thread(void) { return writer_thread; }
void cunwind_set_writer_thread(int flag) { writer_thread = flag; }

void cunwind_set_tracing(int on) { __atomic_store_n(&cunwind_tracing_flag, on, __ATOMIC_RELEASE); }

static void after_fork_in_child(void) {
  // Only async-signal-safe work here: the child must stop tracing before it can touch
  // the parent's log, and the forking thread has a new id.
  __atomic_store_n(&cunwind_tracing_flag, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&cunwind_latest_session_pointer, NULL, __ATOMIC_RELAXED);
  cached_thread_id = 0;
}

static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;
static void install_fork_handler_once(void) { pthread_atfork(NULL, NULL, after_fork_in_child); }
void cunwind_install_fork_handler(void) { pthread_once(&fork_handler_once, install_fork_handler_once); }

int cunwind_try_lock(int fd) {
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 1;
  return errno == EWOULDBLOCK ? 0 : -1;
}

int cunwind_open_log(const char *path, int exclusive) {
  // O_NONBLOCK only for the open itself: a FIFO nobody reads fails at once (ENXIO) instead
  // of blocking the host in `open`. Writes then block as usual (back-pressure, not EAGAIN).
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  if (exclusive) flags |= O_EXCL;
  int fd = open(path, flags, 0600);
  if (fd < 0) return fd;
  int status = fcntl(fd, F_GETFL);
  if (status == -1 || fcntl(fd, F_SETFL, status & ~O_NONBLOCK) == -1) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int cunwind_is_regular_file(int fd) {
  struct stat status;
  if (fstat(fd, &status) != 0) return -1;
  return S_ISREG(status.st_mode) ? 1 : 0;
}

int cunwind_errno(void) { return errno; }

int cunwind_write_all(int fd, const void *bytes, size_t length) {
  const char *cursor = bytes;
  while (length > 0) {
    ssize_t n = write(fd, cursor, length);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) {
      errno = EIO;
      return -1;
    }
    cursor += n;
    length -= (size_t)n;
  }
  return 0;
}

static void write_signals(sigset_t *set) {
  sigemptyset(set);
  sigaddset(set, SIGPIPE);
  sigaddset(set, SIGXFSZ);
}

void cunwind_block_write_signals(void) {
  sigset_t set;
  write_signals(&set);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int cunwind_write_log(int fd, const void *bytes, size_t length) {
  sigset_t quiet, previous, pending_before;
  write_signals(&quiet);
  pthread_sigmask(SIG_BLOCK, &quiet, &previous);
  sigemptyset(&pending_before);
  sigpending(&pending_before);
  int status = cunwind_write_all(fd, bytes, length);
  int saved = errno;
  if (status != 0 && (saved == EPIPE || saved == EFBIG)) {
    int raised = saved == EPIPE ? SIGPIPE : SIGXFSZ;
    // Ours only when it was not pending before the write; the host's own stays pending.
    if (!sigismember(&pending_before, raised)) {
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, raised);
      struct timespec now = {0, 0};
      while (sigtimedwait(&one, NULL, &now) < 0 && errno == EINTR) {
      }
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, NULL);
  errno = saved;
  return status;
}
