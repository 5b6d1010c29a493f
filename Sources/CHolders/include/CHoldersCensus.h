#ifndef CHOLDERS_CENSUS_H
#define CHOLDERS_CENSUS_H

// The whole-process leak census: every live Swift object of the registry, marked from the
// process's roots, and the unreachable ones grouped into ROOT CYCLE / ROOT LEAK groups as
// Apple's `leaks` prints them. The JSON a census returns is the `census` record's members
// (docs/log-format.md); the text is the `leaks`-style report for stderr.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What callers XOR the addresses of queued objects with, so that the list they pass is no
/// reference to those objects (a plain address in memory the census reads would be a root).
#define CHOLDERS_CENSUS_HIDE ((uintptr_t)0x5c3a5c3a5c3a5c3aull)

/// Objects waiting in a DeallocQueue: unreachable through them alone is *delayed*, not
/// leaked. `hidden[i]` is the object's address XOR CHOLDERS_CENSUS_HIDE, `queue[i]` an index
/// into `labels`. All arrays may be NULL when `count` (or `label_count`) is 0.
typedef struct {
  const uintptr_t *hidden;
  const uint32_t *queue;
  size_t count;
  const char *const *labels;
  size_t label_count;
} cholders_census_pending;

/// Runs one census. `label` names it (`exit`, or a checkpoint's label). Returns a malloc'ed
/// NUL-terminated JSON object, the `census` record's members without `ev` and `t` (or with
/// `error` when the census could not run); `text`, when not NULL, receives the
/// `leaks`-style report (malloc'ed, free with cholders_free). NULL only when out of memory.
char *cholders_census_json(const cholders_census_pending *pending, const char *label,
                           char **text);

/// Whether DEALLOCTRACE_LEAKS asked for a census at exit (set, not empty, not "0").
int cholders_census_requested(void);
/// Marks the exit census as done (the recorder wrote it into its log), so that the
/// load-time exit handler does not print another.
void cholders_census_exit_done(void);

/// What the last census did, for tests and benchmarks.
typedef struct {
  uint64_t objects;  // valid live objects examined
  uint64_t edges;  // owning references between them
  uint64_t unreachable;  // objects in leak groups
  uint64_t delayed;  // objects waiting in a queue (and what only they keep)
  uint64_t threads_stopped;  // threads parked by the census's signal while it read memory
  uint64_t threads_unstopped;  // threads it could not park (the signal blocked, or no answer)
  uint64_t total_us;
  uint64_t extra_bytes;  // the census's own memory in use at its end (pages resident),
                        // everything but the fixed tables; 0 when it failed
  uint64_t fixed_bytes;  // what it maps whatever the heap's size (read windows, tables)
} cholders_census_stats;
void cholders_last_census_stats(cholders_census_stats *out);

#ifdef __cplusplus
}
#endif

#endif
