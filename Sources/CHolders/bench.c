// Benchmark-friendly entry points (declared in CHoldersExtras.h): tight C loops over the
// runtime's entry points, so that the cost of the hooks is measured without Swift's
// optimizer removing or merging refcount operations. Times are the calling thread's CPU
// time, which a busy shared machine disturbs less than wall time.
#define _GNU_SOURCE

#include <time.h>

#include "CHoldersExtras.h"
#include "CUnwind.h"
#include "alloc_stacks.h"

extern void *swift_retain(void *object);
extern void swift_release(void *object);
extern void *swift_allocObject(const void *metadata, size_t size, size_t align_mask);

static uint64_t cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

double cholders_bench_retain_release_ns(void *object, uint64_t iterations) {
  if (iterations == 0) return 0;
  uint64_t start = cpu_ns();
  for (uint64_t i = 0; i < iterations; i++) {
    swift_retain(object);
    swift_release(object);
  }
  return (double)(cpu_ns() - start) / (double)iterations;
}

double cholders_bench_alloc_free_ns(const void *metadata, size_t size, uint64_t iterations) {
  if (iterations == 0) return 0;
  uint64_t start = cpu_ns();
  for (uint64_t i = 0; i < iterations; i++) {
    void *object = swift_allocObject(metadata, size, 15);
    swift_release(object);
  }
  return (double)(cpu_ns() - start) / (double)iterations;
}

/// Frames left out above the caller in the unwind floor, as the allocation path leaves out
/// the hook's (alloc_stacks.c): the same unwind from the same depth.
#define ALLOCATION_FRAMES_ABOVE 1

double cholders_bench_unwind_ns(uint64_t iterations) {
  if (iterations == 0) return 0;
  uintptr_t frames[CH_ALLOC_STACK_DEPTH];
  uint64_t start = cpu_ns();
  for (uint64_t i = 0; i < iterations; i++) {
    cunwind_backtrace_above_caller(frames, CH_ALLOC_STACK_DEPTH, ALLOCATION_FRAMES_ABOVE);
    __asm__ volatile("" : : "r"(frames) : "memory");
  }
  return (double)(cpu_ns() - start) / (double)iterations;
}

double cholders_bench_libunwind_ns(uint64_t iterations) {
  if (iterations == 0) return 0;
  // As deep as the walk above: the depth, the frames it leaves out, and its own two.
  void *frames[CH_ALLOC_STACK_DEPTH + ALLOCATION_FRAMES_ABOVE + 2];
  uint64_t start = cpu_ns();
  for (uint64_t i = 0; i < iterations; i++) {
    cunwind_libunwind_backtrace(frames, (int)(sizeof frames / sizeof frames[0]));
    __asm__ volatile("" : : "r"(frames) : "memory");
  }
  return (double)(cpu_ns() - start) / (double)iterations;
}

int cholders_bench_set_alloc_stacks(int on) {
  // Only tables that DEALLOCTRACE_ALLOC_STACKS made can be switched back on.
  static int started;
  int was = __atomic_load_n(&ch_alloc_stacks_on, __ATOMIC_SEQ_CST);
  if (was) started = 1;
  if (!started) return -1;
  __atomic_store_n(&ch_alloc_stacks_on, on ? 1 : 0, __ATOMIC_SEQ_CST);
  return was;
}
