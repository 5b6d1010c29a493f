// Holders under AddressSanitizer: what the scan asks the sanitizer's runtime instead of
// glibc's allocator.
//
// AddressSanitizer replaces malloc (its blocks have its own headers, and a freed block waits
// in a quarantine instead of glibc's bins) and maps shadow memory: a low shadow of about
// 256 MiB and a high shadow of terabytes, both writable. So, when its runtime is in the
// process:
// - an object's extent is the size of the live block that starts at its address
//   (`__sanitizer_get_allocated_begin` says it is one, `__sanitizer_get_allocated_size_fast`
//   its size: the requested size, which is also what malloc_usable_size answers under ASan,
//   so tail-allocated storage stays inside it), not glibc's chunk size word;
// - a heap word outside every registered object is stale when ASan has poisoned it: a freed
//   block in quarantine, a redzone, a block header (`__asan_address_is_poisoned`); that
//   replaces the walk of glibc's chunks (heap.c), and is exact where the walk guesses;
// - with detect_stack_use_after_return (on by default), an instrumented function's locals
//   live in the thread's "fake stack", a mapping of its own that starts with the fake
//   stack's header: the scanning thread's is left out with its real stack (its callers'
//   frames hold nothing of the program's that the normal build would see either);
// - the shadow's whole range (`__asan_get_shadow_mapping`: the shadow of the application's
//   address space, from the shadow offset) is left out of the regions, like tool memory.
// The entry points are found with dlsym when holders start, so the plain build links
// nothing of the sanitizer, and a process that has it runs this whether or not CHolders
// itself was compiled with -fsanitize=address. The scan still reads memory through ch_read
// (a system call), so ASan checks none of those reads and reports none of its intended
// reads of freed or redzone memory, while the tool's own code stays instrumented.
//
// The trade-offs: another thread's fake stack cannot be told from heap memory (ASan names
// only the calling thread's), so a local there is a `heap` root rather than a `stack` one
// (ASAN_OPTIONS=detect_stack_use_after_return=0 keeps locals on the real stacks); the
// scanning thread's fake stack is left out as a whole mapping, with any anonymous mapping
// the kernel merged it with. ASan's own internal memory (its allocator's free lists, its
// stack depot, thread contexts) is scanned as heap memory; it holds no object's address
// (compact offsets, block headers, program counters), and only costs reading time.
#define _GNU_SOURCE

#include <dlfcn.h>

#include "internal.h"

typedef const void *(*allocated_begin_fn)(const void *pointer);
typedef size_t (*allocated_size_fn)(const void *pointer);
typedef int (*is_poisoned_fn)(const volatile void *address);
typedef void (*shadow_mapping_fn)(size_t *scale, size_t *offset);
typedef void *(*fake_stack_fn)(void);

static int on;
static allocated_begin_fn allocated_begin;
static allocated_size_fn allocated_size;
static is_poisoned_fn is_poisoned;
static fake_stack_fn current_fake_stack;
static uintptr_t shadow_start, shadow_end;

/// The top of the user address space as ASan lays out its shadow (47 bits on x86_64, 48 on
/// AArch64's usual layout): the shadow of everything below it is left out. The shadow ends
/// where the program's high memory starts, so a top too high would leave program memory
/// unscanned (AArch64 kernels with 39- or 42-bit address spaces; untested here).
#if defined(__x86_64__)
#define ADDRESS_SPACE_TOP ((uintptr_t)1 << 47)
#else
#define ADDRESS_SPACE_TOP ((uintptr_t)1 << 48)
#endif

int ch_asan_start(void) {
  if (on) return 1;
  if (dlsym(RTLD_DEFAULT, "__asan_init") == NULL) return 0;
  allocated_begin = (allocated_begin_fn)dlsym(RTLD_DEFAULT, "__sanitizer_get_allocated_begin");
  allocated_size = (allocated_size_fn)dlsym(RTLD_DEFAULT, "__sanitizer_get_allocated_size_fast");
  is_poisoned = (is_poisoned_fn)dlsym(RTLD_DEFAULT, "__asan_address_is_poisoned");
  shadow_mapping_fn shadow_mapping =
      (shadow_mapping_fn)dlsym(RTLD_DEFAULT, "__asan_get_shadow_mapping");
  current_fake_stack = (fake_stack_fn)dlsym(RTLD_DEFAULT, "__asan_get_current_fake_stack");
  if (!allocated_begin || !allocated_size || !is_poisoned || !shadow_mapping ||
      !current_fake_stack) {
    return -1;
  }
  size_t scale = 0, offset = 0;
  shadow_mapping(&scale, &offset);
  if (scale == 0 || scale > 8) return -1;
  shadow_start = (uintptr_t)offset;
  shadow_end = (uintptr_t)offset + (ADDRESS_SPACE_TOP >> scale);
  __atomic_store_n(&on, 1, __ATOMIC_RELEASE);
  return 1;
}

int ch_asan_on(void) { return __atomic_load_n(&on, __ATOMIC_ACQUIRE); }

uint64_t ch_asan_block_size(uintptr_t address) {
  // The begin check first: the size call is only defined for a block's start, and the
  // checked `__sanitizer_get_allocated_size` reports (and stops the process) otherwise.
  if (address == 0 || allocated_begin((const void *)address) != (const void *)address) return 0;
  return allocated_size((const void *)address);
}

int ch_asan_poisoned(uintptr_t address) { return is_poisoned((const volatile void *)address); }

uintptr_t ch_asan_own_fake_stack(void) {
  return ch_asan_on() ? (uintptr_t)current_fake_stack() : 0;
}

int ch_asan_shadow(uintptr_t *start, uintptr_t *end) {
  if (!ch_asan_on()) return 0;
  *start = shadow_start;
  *end = shadow_end;
  return 1;
}
