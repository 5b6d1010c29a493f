#ifndef CHOLDERS_EXTRAS_H
#define CHOLDERS_EXTRAS_H

// Additions beyond the scanner's contract (CHolders.h, whose answer docs/log-format.md
// defines): tool memory for the recorder, the C writers' JSON, and diagnostics for tests
// and benchmarks.

#include <stddef.h>
#include <stdint.h>

#include "CHolders.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Whether the runtime's own retain adapter had the Swift 6.3 masking bug (probed on a fake
/// object when holders were enabled): 1 yes, 0 no, -1 not probed (holders never enabled).
/// Either way the fixed adapter is what runs once holders are on.
int cholders_runtime_had_adapter_bug(void);

/// Memory that scans never read (an anonymous mapping listed as tool memory; rounded up to
/// pages, zero-filled), for the recorder's own bookkeeping of the objects it watches: a
/// target address or a retained reference kept in ordinary Swift or malloc memory is itself
/// found as a holder (a `_ContiguousArrayStorage<AnyObject>` or a heap root). NULL when
/// out of memory. Free with cholders_tool_memory_free and the same size.
void *cholders_tool_memory(size_t size);
void cholders_tool_memory_free(void *memory, size_t size);

/// The calling thread's OS thread id (gettid), as the scan reports stack roots.
int64_t cholders_thread_id(void);

/// What the last cholders_scan call did, for benchmarks and diagnostics.
typedef struct {
  uint64_t objects;  // registry rows in the snapshot
  uint64_t regions;  // memory regions scanned
  uint64_t bytes;  // bytes read by one pass
  uint64_t levels;  // passes made
  uint64_t snapshot_us;  // copying and sorting the registry
  uint64_t regions_us;  // reading /proc/self/maps, thread stacks, modules
  uint64_t passes_us;  // all memory passes with their hit processing
  uint64_t total_us;
  uint64_t cpu_us;  // the scanning thread's CPU time (wall time suffers on a busy machine)
  uint64_t free_walk_us;  // walking glibc's malloc chunks (0 when no heap word was hit)
  uint64_t free_ranges;  // free ranges those walks found
  int64_t free_walk;  // 0 no walk, -1 [heap] did not read as glibc's (its words kept), else 1
  int64_t spans_walked;  // 1 when the snapshot walked every span (more than it lists)
  int64_t failed;  // 1 when memory ran out and the scan returned NULL
  int64_t proc_mem;  // 1 when memory was read through /proc/self/mem (the fallback)
} cholders_scan_stats;
void cholders_last_scan_stats(cholders_scan_stats *out);

/// CPU nanoseconds per swift_retain + swift_release pair on `object` (a live Swift object).
double cholders_bench_retain_release_ns(void *object, uint64_t iterations);
/// CPU nanoseconds per swift_allocObject + final swift_release of an instance of the class
/// with `metadata` (its instance size `size`; a class without stored properties or deinit).
double cholders_bench_alloc_free_ns(const void *metadata, size_t size, uint64_t iterations);

/// Writes `text` as the inside of a JSON string through `sink`, by the log format's one rule
/// (docs/log-format.md): `"` and `\\` escaped; the C0 controls, DEL, the C1 controls, U+2028,
/// U+2029 and the bidirectional overrides as \\u escapes; each byte that is not part of a
/// valid UTF-8 sequence as U+FFFD. Shared by every C writer (holders, the census, the preload).
void cholders_json_escape(const char *text, size_t length,
                          void (*sink)(void *context, const char *bytes, size_t length),
                          void *context);

/// One target's answer as the HOLDERS-VALUE JSON text (`null` when not found), for the C
/// writers (the census's `growing`, which the preload library writes without Swift) and the
/// scanner's tests. A malloc'ed NUL-terminated text, freed with cholders_free; NULL when
/// memory ran out. The recorder writes the same text from the same data in Swift.
char *cholders_holders_json(const cholders_holders *holders);

/// Allocation stacks (DEALLOCTRACE_ALLOC_STACKS=1): whether they are on, allocations given a
/// stack and those the full tables could not record since the start, and what the tables
/// hold now (live objects with a stack, distinct stacks). `sample_every`: one allocation in
/// this many is recorded (DEALLOCTRACE_ALLOC_STACKS=N; 1 records every one).
typedef struct {
  int64_t on;
  uint64_t sample_every;
  uint64_t recorded, dropped;
  uint64_t objects, stacks;
} cholders_alloc_stack_counts;
void cholders_alloc_stack_stats(cholders_alloc_stack_counts *out);

/// Return addresses kept per allocation stack, innermost first.
#define CHOLDERS_ALLOC_STACK_DEPTH 32
/// Where the live object at `object` was allocated, innermost first, into `ips` (at most
/// `capacity`): how many, 0 when allocation stacks are off or it has none. For the `holders`
/// records of survivors and failed checks, whose objects the caller keeps alive.
size_t cholders_alloc_stack_of(uintptr_t object, uintptr_t *ips, size_t capacity);

/// CPU nanoseconds per unwind of the allocation stacks' depth, from as deep a stack as the
/// allocation hook's (the floor of an allocation with stacks).
double cholders_bench_unwind_ns(uint64_t iterations);
/// The same with libunwind's `unw_backtrace` alone: the walk's reference.
double cholders_bench_libunwind_ns(uint64_t iterations);
/// Switches allocation stacks off (0) or back on, for a benchmark's same-process floor;
/// returns whether they were on, or -1 when DEALLOCTRACE_ALLOC_STACKS never turned them on.
/// Only while no other thread allocates.
int cholders_bench_set_alloc_stacks(int on);

#ifdef __cplusplus
}
#endif

#endif
