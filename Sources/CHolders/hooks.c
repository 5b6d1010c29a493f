// Installing the runtime hooks: libswiftCore's exported hook variables, the Swift 6.3
// retain-adapter fix, the allocation and release hooks that feed the registry, and the
// load-time constructor for DEALLOCTRACE_HOLDERS=1.
//
// Assumptions, checked at enable time (anything missing refuses, never crashes):
// - libswiftCore exports `_swift_allocObject`, `_swift_retain`, `_swift_release`,
//   `_swift_release_n`, the flag `_swift_enableSwizzlingOfAllocationAndRefCountingFunctions_
//   forInstrumentsOnly` and `swift_retainCount` (include/swift/Runtime/InstrumentsSupport.h).
// - While the flag is set, `swift_retain` jumps through the private pointer
//   `_swift_retain_adapter` (`_ZL21_swift_retain_adapter` in .symtab). In Swift 6.3 the
//   default adapter masks the argument with the spare-bit mask before the "<= 0: tagged or
//   immortal" test, so an immortal string's bridge value becomes a pointer into .rodata and
//   the retain writes there (swiftlang/swift#88924, fixed for 6.4). The runtime exports no
//   version function, so the bug is not guessed from a version: when the adapter pointer is
//   found it is replaced by one that does the test first (correct on fixed runtimes too), and
//   the old adapter is probed once on a fake object in tool memory to record whether this
//   runtime had the bug. When the pointer cannot be found (a stripped libswiftCore), holders
//   are refused: a runtime with the bug would crash at the first long string literal.
// - The inline refcount layout of 64-bit targets (swift/RefCount.h; internal.h has it).
#define _GNU_SOURCE

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "CHoldersExtras.h"
#include "alloc_stacks.h"
#include "history.h"
#include "internal.h"

typedef uintptr_t (*alloc_fn)(uintptr_t metadata, size_t size, size_t align_mask);
typedef uintptr_t (*retain_fn)(uintptr_t object);
typedef void (*release_fn)(uintptr_t object);
typedef void (*release_n_fn)(uintptr_t object, uint32_t n);
typedef uintptr_t (*retain_n_fn)(uintptr_t object, uint32_t n);

__thread int ch_in_tool __attribute__((tls_model("initial-exec")));


static alloc_fn *alloc_hook;
static retain_fn *retain_hook;
static release_fn *release_hook;
static release_n_fn *release_n_hook;
static retain_n_fn *retain_n_hook;
static retain_n_fn original_retain_n;
static retain_fn *adapter_pointer;
static unsigned char *swizzling_flag;

static alloc_fn original_alloc;
static release_fn original_release;
static release_n_fn original_release_n;
static size_t (*retain_count_fn)(uintptr_t object);

static int state = CHOLDERS_OFF;
static int started_at_load;
static int runtime_had_bug = -1;
static char problem[512];
static pthread_mutex_t enable_lock = PTHREAD_MUTEX_INITIALIZER;

#define SPARE_BITS_MASK 0x00fffffffffffff8ull
/// Where a hook returns to: the program's frame, where a history event's stack begins.
#define RETURN_ADDRESS ((uintptr_t)__builtin_return_address(0))
/// A hook: reached only through the runtime's pointers, so never inlined anyway; `noinline`
/// also keeps the optimizer from splitting its unlikely history path into a separate
/// `.cold` function, whose return address would be the hook's, not the program's.
#define HOOK __attribute__((noinline))

// ---- the hooks ---------------------------------------------------------------------------

// The runtime's own entries behind the hook variables, when they are what the variables
// held at install time (found in .symtab): then the hooks do the non-final refcount change
// inline, with the same compare-and-swap as the runtime's fast path, and call the runtime
// only for what it alone decides (a final release, side tables, immortal objects,
// overflow). Any other function found there (another tool's hook) is always called.
static retain_fn default_retain;
static release_fn default_release;
static int inline_retain, inline_release;

int64_t ch_history_count(uintptr_t object) {
  uint64_t bits = __atomic_load_n((const uint64_t *)(object + 8), __ATOMIC_RELAXED);
  if (CH_RC_SLOW(bits)) {
    if (CH_RC_IMMORTAL(bits) || retain_count_fn == NULL) return -1;
    return (int64_t)retain_count_fn(object);
  }
  if (bits & CH_RC_DEINITING) return -1;
  return (int64_t)CH_RC_STRONG_EXTRA(bits) + 1;
}

/// Replacement for the runtime's retain adapter: negative (tagged or immortal) values are
/// returned untouched, as the unswizzled `swift_retain` does, before masking.
HOOK static uintptr_t fixed_retain_adapter(uintptr_t object) {
  if ((intptr_t)object <= 0) return object;
  uintptr_t pointer = object & SPARE_BITS_MASK;
  if (__builtin_expect(ch_history_wants(pointer), 0)) {
    // A type under history (history.c): the runtime retains, then the event is recorded.
    retain_fn retain = __atomic_load_n(retain_hook, __ATOMIC_RELAXED);
    retain(pointer);
    int64_t count = ch_history_count(pointer);
    if (count > 0) ch_history_record(pointer, CH_HISTORY_RETAIN, count, RETURN_ADDRESS);
    return object;
  }
  if (inline_retain) {
    uint64_t *counts = (uint64_t *)(pointer + 8);
    uint64_t bits = __atomic_load_n(counts, __ATOMIC_RELAXED);
    for (;;) {
      uint64_t next = bits + CH_RC_ONE_STRONG;
      if ((int64_t)next < 0) break;  // side table, immortal or overflow: the runtime's
      if (__atomic_compare_exchange_n(counts, &bits, next, 1, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
        return object;
      }
    }
  }
  retain_fn retain = __atomic_load_n(retain_hook, __ATOMIC_RELAXED);
  retain(pointer);
  return object;
}

/// An object's final release: out of the registry and, when they are on, of the
/// allocation stacks' table.
static inline void forget(uintptr_t object) {
  ch_registry_remove(object);
  if (__builtin_expect(ch_alloc_stacks_on, 0)) ch_alloc_stacks_forget(object);
  if (__builtin_expect(ch_history_wants(object), 0)) ch_history_forget(object);
}

/// Removes the object when this release (of `n` references) takes its strong count to zero.
/// Read before the original release runs: afterwards the memory may already be free. A weak
/// load racing with the last release can make the removal premature; the scan then simply
/// does not know that object (it is never wrong about one it reports).
static inline void note_release(uintptr_t object, uint32_t n) {
  uint64_t bits = __atomic_load_n((const uint64_t *)(object + 8), __ATOMIC_RELAXED);
  if (CH_RC_SLOW(bits)) {
    if (CH_RC_IMMORTAL(bits)) return;
    // A side table holds the counts: ask the runtime (it reads, never retains).
    if (retain_count_fn && retain_count_fn(object) <= n) forget(object);
    return;
  }
  if (bits & CH_RC_DEINITING) return;  // already deiniting
  if (CH_RC_STRONG_EXTRA(bits) + 1 <= n) forget(object);
}

/// The last metadata this thread registered, so that a run of same-typed allocations
/// skips the metadata set.
static __thread uintptr_t last_metadata __attribute__((tls_model("initial-exec")));

HOOK static uintptr_t hook_alloc(uintptr_t metadata, size_t size, size_t align_mask) {
  uintptr_t object = original_alloc(metadata, size, align_mask);
  if (object && !ch_in_tool) {
    if (metadata != last_metadata) {
      ch_metadata_note(metadata);  // allocates nothing: no recursion guard needed
      last_metadata = metadata;
      if (__builtin_expect(ch_history_on, 0)) ch_history_note_type(metadata);
    }
    ch_registry_insert(object);
    if (__builtin_expect(ch_alloc_stacks_on, 0)) ch_alloc_stacks_record(object);
    // An older object's history at this address (its final release unseen) is not this
    // one's; this one's starts with its allocation.
    if (__builtin_expect(ch_history_wants(object), 0)) {
      ch_history_forget(object);
      ch_history_record(object, CH_HISTORY_ALLOC, 1, RETURN_ADDRESS);
    }
  }
  return object;
}

/// Records a release of `n` references of `object` when its type is under history, before
/// the runtime's release (after it, the memory may be free).
static inline __attribute__((always_inline)) void note_history_release(uintptr_t object,
                                                                       uint32_t n) {
  if (__builtin_expect(!ch_history_wants(object), 1)) return;
  int64_t count = ch_history_count(object);
  for (uint32_t i = 1; count > 0 && i <= n; i++) {
    ch_history_record(object, CH_HISTORY_RELEASE, count - i, RETURN_ADDRESS);
  }
}

HOOK static void hook_release(uintptr_t object) {
  if ((intptr_t)object > 0) {
    note_history_release(object, 1);
    if (inline_release) {
      uint64_t *counts = (uint64_t *)(object + 8);
      uint64_t bits = __atomic_load_n(counts, __ATOMIC_RELAXED);
      for (;;) {
        uint64_t next = bits - CH_RC_ONE_STRONG;
        if ((int64_t)next < 0) break;  // the last reference, a side table, immortal
        if (__atomic_compare_exchange_n(counts, &bits, next, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED)) {
          return;
        }
      }
    }
    note_release(object, 1);
  }
  original_release(object);
}

HOOK static void hook_release_n(uintptr_t object, uint32_t n) {
  if ((intptr_t)object > 0 && n > 0) {
    note_history_release(object, n);
    note_release(object, n);
  }
  original_release_n(object, n);
}

/// Installed only with a history on: swift_retain_n does not pass the retain adapter.
HOOK static uintptr_t hook_retain_n(uintptr_t object, uint32_t n) {
  uintptr_t result = original_retain_n(object, n);
  if ((intptr_t)object > 0 && n > 0 && ch_history_wants(object)) {
    int64_t count = ch_history_count(object);
    for (uint32_t i = 0; count > 0 && i < n; i++) {
      ch_history_record(object, CH_HISTORY_RETAIN, count - (int64_t)(n - 1 - i), RETURN_ADDRESS);
    }
  }
  return result;
}

// ---- installation ------------------------------------------------------------------------

static int refuse(const char *why) {
  snprintf(problem, sizeof problem, "holders off: %s", why);
  state = CHOLDERS_REFUSED;
  return state;
}

/// Finds `_swift_retain_adapter` in the .symtab of the loaded libswiftCore and checks that
/// it points into libswiftCore's code.
static retain_fn *find_adapter(void) {
  Dl_info info;
  void *retain_symbol = dlsym(RTLD_DEFAULT, "swift_retain");
  if (retain_symbol == NULL || dladdr(retain_symbol, &info) == 0 || info.dli_fname == NULL) {
    return NULL;
  }
  uintptr_t value = ch_elf_symbol_value(info.dli_fname, "_ZL21_swift_retain_adapter", 0);
  uintptr_t retain_entry = ch_elf_symbol_value(info.dli_fname, "__swift_retain_", 1);
  uintptr_t release_entry = ch_elf_symbol_value(info.dli_fname, "__swift_release_", 1);
  if (retain_entry) default_retain = (retain_fn)((uintptr_t)info.dli_fbase + retain_entry);
  if (release_entry) default_release = (release_fn)((uintptr_t)info.dli_fbase + release_entry);
  if (value == 0) return NULL;
  retain_fn *pointer = (retain_fn *)((uintptr_t)info.dli_fbase + value);
  Dl_info target;
  retain_fn current = __atomic_load_n(pointer, __ATOMIC_RELAXED);
  if (dladdr((void *)current, &target) == 0 || target.dli_fbase != info.dli_fbase) return NULL;
  return pointer;
}

/// Calls the runtime's own adapter with an "immortal" value whose masked form points at a
/// fake object in tool memory: a buggy adapter retains the fake (its refcount word changes),
/// a correct one ignores the value. Nothing outside tool memory is touched either way.
static int probe_adapter_bug(retain_fn adapter) {
  uint64_t *fake = ch_map(4096);
  if (fake == NULL) return -1;
  memset(fake, 0, 64);
  adapter((uintptr_t)fake | (1ull << 63));
  int buggy = fake[1] != 0;
  ch_unmap(fake, 4096);
  return buggy;
}

/// Address space the holder machinery reserves: the registry's tables (its level-1 table,
/// the metadata set, the first slab of bitmaps, about 25 MiB) and one scan's working memory
/// (node, edge, hit and candidate tables, about 200 MiB; reserved, touched only as needed).
/// Under an address-space limit (RLIMIT_AS, `ulimit -v`) all of it counts.
#define ADDRESS_SPACE_NEEDED ((uint64_t)256 << 20)

/// Bytes mapped now (/proc/self/statm's first field, in pages); 0 when unknown.
static uint64_t address_space_used(void) {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[64];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = 0;
  return (uint64_t)strtoull(text, NULL, 10) * (uint64_t)sysconf(_SC_PAGESIZE);
}

/// Refuses under an address-space limit with less than twice ADDRESS_SPACE_NEEDED free:
/// the registry and a scan would take what the host's own allocations need, and the host
/// would die on the next one that fails (a Swift allocation failure is fatal).
static int refuse_tight_address_space(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  uint64_t used = address_space_used();
  uint64_t free_bytes = (uint64_t)limit.rlim_cur > used ? (uint64_t)limit.rlim_cur - used : 0;
  if (free_bytes >= 2 * ADDRESS_SPACE_NEEDED) return 0;
  char why[400];
  snprintf(why, sizeof why,
           "the address space is limited (ulimit -v) to %llu MiB with %llu MiB free; the "
           "registry and a scan reserve about %llu MiB and must leave the program as much",
           (unsigned long long)(limit.rlim_cur >> 20), (unsigned long long)(free_bytes >> 20),
           (unsigned long long)(ADDRESS_SPACE_NEEDED >> 20));
  refuse(why);
  return 1;
}

/// Why this process's memory cannot be scanned (a sanitizer the scan does not know, an
/// allocator other than glibc's or ASan's), or NULL when it can.
static const char *unscannable_process(void) {
  // ThreadSanitizer's shadow and allocator are not taught to the scan; AddressSanitizer's
  // are (asan.c), and then its allocator stands in for glibc's.
  if (dlsym(RTLD_DEFAULT, "__tsan_init") != NULL) {
    return "this process runs under a sanitizer (ThreadSanitizer) whose shadow memory "
           "and allocator the reference scan does not know";
  }
  int asan = ch_asan_start();
  if (asan < 0) {
    return "this process runs under AddressSanitizer, but its runtime lacks an entry "
           "point the reference scan asks (__sanitizer_get_allocated_begin, ...)";
  }
  // Without ASan, the scan reads an object's extent from glibc's chunk header (scan.c).
  Dl_info malloc_info;
  void *malloc_symbol = dlsym(RTLD_DEFAULT, "malloc");
  if (asan == 0 && (malloc_symbol == NULL || dladdr(malloc_symbol, &malloc_info) == 0 ||
                    malloc_info.dli_fname == NULL ||
                    strstr(malloc_info.dli_fname, "/libc.so") == NULL)) {
    return "malloc in this process is not glibc's, whose chunk headers the reference "
           "scan reads (a preloaded allocator, or valgrind)";
  }
  return NULL;
}

/// Finds the runtime's hook variables and fixes its retain adapter; the reason when it
/// cannot, or NULL.
static const char *find_runtime_hooks(void) {
  alloc_hook = dlsym(RTLD_DEFAULT, "_swift_allocObject");
  retain_hook = dlsym(RTLD_DEFAULT, "_swift_retain");
  release_hook = dlsym(RTLD_DEFAULT, "_swift_release");
  release_n_hook = dlsym(RTLD_DEFAULT, "_swift_release_n");
  retain_n_hook = dlsym(RTLD_DEFAULT, "_swift_retain_n");
  swizzling_flag = dlsym(RTLD_DEFAULT,
                         "_swift_enableSwizzlingOfAllocationAndRefCountingFunctions_forInstrumentsOnly");
  retain_count_fn = (size_t (*)(uintptr_t))dlsym(RTLD_DEFAULT, "swift_retainCount");
  if (!alloc_hook || !retain_hook || !release_hook || !release_n_hook || !swizzling_flag ||
      !retain_count_fn) {
    return "this Swift runtime does not export the allocation and refcount hook "
           "variables (_swift_allocObject, _swift_release, ...)";
  }
  // CHOLDERS_TEST_NO_SYMTAB=1 makes the adapter look unfindable, as on a stripped
  // libswiftCore, so that tests can check the refusal (a path no runtime here takes).
  const char *simulate = getenv("CHOLDERS_TEST_NO_SYMTAB");
  adapter_pointer = simulate && strcmp(simulate, "1") == 0 ? NULL : find_adapter();
  if (adapter_pointer == NULL) {
    return "cannot find _swift_retain_adapter in libswiftCore's symbol table, so the "
           "Swift 6.3 retain-adapter crash (swiftlang/swift#88924) cannot be fixed here";
  }
  retain_fn old_adapter = __atomic_load_n(adapter_pointer, __ATOMIC_ACQUIRE);
  if (old_adapter != fixed_retain_adapter) {
    runtime_had_bug = probe_adapter_bug(old_adapter);
    // Fixed before anything can set the flag; never restored (other threads may be inside).
    __atomic_store_n(adapter_pointer, fixed_retain_adapter, __ATOMIC_RELEASE);
  }
  return NULL;
}

/// Points the runtime's hook variables at ours. Release hooks first, so that no object is
/// registered whose final release goes unseen; the allocation hook last (a changed pointer
/// makes swift_allocObject set the flag).
static void install_hooks(void) {
  original_release = __atomic_load_n(release_hook, __ATOMIC_ACQUIRE);
  original_release_n = __atomic_load_n(release_n_hook, __ATOMIC_ACQUIRE);
  original_alloc = __atomic_load_n(alloc_hook, __ATOMIC_ACQUIRE);
  inline_retain = default_retain != NULL &&
                  __atomic_load_n(retain_hook, __ATOMIC_ACQUIRE) == default_retain;
  inline_release = default_release != NULL && original_release == default_release;
  __atomic_store_n(release_hook, hook_release, __ATOMIC_RELEASE);
  __atomic_store_n(release_n_hook, hook_release_n, __ATOMIC_RELEASE);
  if (ch_history_on && retain_n_hook != NULL) {
    original_retain_n = __atomic_load_n(retain_n_hook, __ATOMIC_ACQUIRE);
    __atomic_store_n(retain_n_hook, hook_retain_n, __ATOMIC_RELEASE);
  }
  __atomic_store_n(alloc_hook, hook_alloc, __ATOMIC_RELEASE);
  __atomic_store_n(swizzling_flag, 1, __ATOMIC_SEQ_CST);
}

static int enable_locked(void) {
  if (state != CHOLDERS_OFF) return state;
  const char *why = unscannable_process();
  if (why) return refuse(why);
  if (refuse_tight_address_space()) return state;
  why = find_runtime_hooks();
  if (why) return refuse(why);
  if (!ch_registry_start()) return refuse("cannot map memory for the live-object registry");
  ch_alloc_stacks_start();
  ch_history_start();
  install_hooks();
  ch_fork_handlers_install();
  problem[0] = 0;
  state = CHOLDERS_ON;
  return state;
}

void ch_hooks_fork_child(void) { pthread_mutex_init(&enable_lock, NULL); }

int cholders_enable(void) {
  int result = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
  if (result != CHOLDERS_OFF) return result;
  pthread_mutex_lock(&enable_lock);
  ch_in_tool = 1;
  result = enable_locked();
  ch_in_tool = 0;
  __atomic_store_n(&state, result, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&enable_lock);
  return result;
}

int cholders_state(void) { return __atomic_load_n(&state, __ATOMIC_ACQUIRE); }
const char *cholders_problem(void) { return problem; }
int cholders_started_at_load(void) { return started_at_load; }
uint64_t cholders_live_count(void) { return ch_registry_count(); }

/// -1 unknown (not probed), 0 the runtime's adapter was correct, 1 it had the 6.3 bug.
int cholders_runtime_had_adapter_bug(void) { return runtime_had_bug; }

/// With DEALLOCTRACE_HOLDERS set (non-empty, not "0") the registry starts while the program
/// loads, so objects made before the first queue or `start` have names too. A refusal is
/// said once on stderr here, because no Swift code runs yet to say it.
__attribute__((constructor)) static void cholders_load(void) {
  const char *value = getenv("DEALLOCTRACE_HOLDERS");
  if (value == NULL || value[0] == 0 || strcmp(value, "0") == 0) return;
  if (cholders_enable() == CHOLDERS_ON) {
    started_at_load = 1;
  } else {
    char line[600];
    int n = snprintf(line, sizeof line, "dealloctrace: %s\n", problem);
    if (n > 0) {
      ssize_t ignored = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
      (void)ignored;
    }
  }
}

int64_t cholders_thread_id(void) { return (int64_t)gettid(); }
