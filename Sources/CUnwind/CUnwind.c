#define _GNU_SOURCE

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// The header (Debian's libunwind-dev) gives the prototype that the loaded entry point must
// have; UNW_LOCAL_ONLY binds its names to the fast local-process versions. Nothing here
// references a libunwind symbol at link time: `__typeof__` does not.
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "CUnwind.h"
#include "fast_unwind.h"

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
  cunwind_fast_unwinder_start();
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

int cunwind_libunwind_backtrace(void **buffer, int capacity) {
  if (capacity <= 0) return 0;
  cunwind_backtrace_function function = current_unwinder();
  if (function == NULL) return 0;
  int n = function(buffer, capacity);
  return n < 0 ? 0 : n;
}

/// The frames from the caller of this function's caller out: the cached-rule walk, or
/// libunwind's where that walk cannot follow a frame. Inlined, so that its callers' first
/// frame is their caller's, as with `unw_backtrace` called from them directly.
static inline __attribute__((always_inline)) int backtrace_from_caller(void **buffer,
                                                                       int capacity) {
  if (capacity <= 0) return 0;
  if (current_unwinder() == NULL) return 0;
  int n = cunwind_fast_backtrace(buffer, capacity);
  return n >= 0 ? n : cunwind_libunwind_backtrace(buffer, capacity);
}

int cunwind_backtrace(void **buffer, int capacity) {
  return backtrace_from_caller(buffer, capacity);
}

__attribute__((noinline)) int cunwind_backtrace_above_caller(uintptr_t *buffer, int capacity,
                                                             int skip_above_caller) {
  if (capacity <= 0) return 0;
  // The caller's frame is normally at index 1 (index 0 is this function); `slack` bounds
  // the search for it, but only two extra frames are unwound.
  enum { slack = 8 };
  void *raw[256 + slack];
  int want = capacity + skip_above_caller + 2;
  if (want > 256 + slack) want = 256 + slack;
  int n = backtrace_from_caller(raw, want);
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
