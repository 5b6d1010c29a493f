#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "CUnwind.h"

/// From libswiftCore, which every Swift program links.
extern char *swift_demangle(const char *mangled, size_t length, char *out_buffer,
                            size_t *out_buffer_size, uint32_t flags);

extern size_t swift_retainCount(const void *object);

int cunwind_tracing_flag = 0;
void *cunwind_session_pointer = NULL;
uint64_t cunwind_object_id_counter = 0;

void cunwind_set_current_session(void *session) {
  __atomic_store_n(&cunwind_session_pointer, session, __ATOMIC_RELEASE);
}

intptr_t cunwind_retain_count(const void *object) { return (intptr_t)swift_retainCount(object); }

static __thread int64_t cached_thread_id = 0;
static __thread cunwind_pending_enqueue thread_pending;
static __thread uint64_t thread_announced = 0;
static __thread int writer_thread = 0;
static int forked_child = 0;

int cunwind_backtrace(void **buffer, int capacity) {
  if (capacity <= 0) return 0;
  int n = unw_backtrace(buffer, capacity);
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
  int n = unw_backtrace(raw, want);
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
  cached_thread_id = 0;
  forked_child = 1;
}

static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;
static void install_fork_handler_once(void) { pthread_atfork(NULL, NULL, after_fork_in_child); }
void cunwind_install_fork_handler(void) { pthread_once(&fork_handler_once, install_fork_handler_once); }

int cunwind_forked_child(void) { return forked_child; }

int cunwind_symbol_name(uintptr_t ip, char *name, size_t capacity) {
  if (capacity == 0) return 0;
  name[0] = 0;
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0) return 0;
  if (unw_init_local(&cursor, &context) != 0) return 0;
  if (unw_set_reg(&cursor, UNW_REG_IP, (unw_word_t)ip) != 0) return 0;
  char mangled[2048];
  unw_word_t offset = 0;
  int status = unw_get_proc_name(&cursor, mangled, sizeof mangled, &offset);
  if (status != 0 && status != -UNW_ENOMEM) return 0;
  mangled[sizeof mangled - 1] = 0;
  if (mangled[0] == 0) return 0;
  char *demangled = swift_demangle(mangled, strlen(mangled), NULL, NULL, 0);
  const char *chosen = demangled ? demangled : mangled;
  strncpy(name, chosen, capacity - 1);
  name[capacity - 1] = 0;
  free(demangled);
  return 1;
}

struct module_query {
  uintptr_t ip;
  char *path;
  size_t capacity;
  uintptr_t base;
  int found;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct module_query *query = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
    if (segment->p_type != PT_LOAD) continue;
    uintptr_t start = (uintptr_t)info->dlpi_addr + segment->p_vaddr;
    if (query->ip >= start && query->ip < start + segment->p_memsz) {
      const char *name = info->dlpi_name;
      if (name == NULL || name[0] == 0) {
        ssize_t n = readlink("/proc/self/exe", query->path, query->capacity - 1);
        query->path[n > 0 ? n : 0] = 0;
      } else {
        strncpy(query->path, name, query->capacity - 1);
        query->path[query->capacity - 1] = 0;
      }
      query->base = (uintptr_t)info->dlpi_addr;
      query->found = 1;
      return 1;
    }
  }
  return 0;
}

int cunwind_module_of(uintptr_t ip, char *path, size_t capacity, uintptr_t *base) {
  if (capacity == 0) return 0;
  struct module_query query = {ip, path, capacity, 0, 0};
  path[0] = 0;
  dl_iterate_phdr(find_module, &query);
  *base = query.base;
  return query.found;
}

int cunwind_try_lock(int fd) {
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 1;
  return errno == EWOULDBLOCK ? 0 : -1;
}

int cunwind_open_log(const char *path, int exclusive) {
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW;
  if (exclusive) flags |= O_EXCL;
  return open(path, flags, 0600);
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
