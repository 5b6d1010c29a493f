#ifndef CHOLDERS_H
#define CHOLDERS_H

// Who still holds a Swift object: a registry of live Swift objects fed by libswiftCore's
// allocation and release hooks, and a reference scan over the process's writable memory
// that names each holder from the runtime's own metadata. The JSON a scan returns is the
// `holders` record's value, defined in docs/log-format.md.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// State of the holder machinery in this process.
enum { CHOLDERS_OFF = 0, CHOLDERS_ON = 1, CHOLDERS_REFUSED = 2 };
/// Installs the hooks and starts the registry (idempotent, thread-safe). Returns the state
/// afterwards; CHOLDERS_REFUSED when this runtime cannot be hooked safely (see problem).
int cholders_enable(void);
int cholders_state(void);
/// One line saying why holders were refused (empty otherwise).
const char *cholders_problem(void);
/// 1 when the registry was started by the load-time constructor (DEALLOCTRACE_HOLDERS=1),
/// 0 when started from code (only objects allocated after that call are known).
int cholders_started_at_load(void);
/// Live objects in the registry now.
uint64_t cholders_live_count(void);
/// Scans for who holds each of the `count` objects at `targets` (object addresses).
/// Returns a malloc'ed NUL-terminated JSON array, one element per target in order, each
/// element exactly the HOLDERS-VALUE below (or `null` for a target that is not a live
/// registered object). The caller frees it with cholders_free. The calling thread's own
/// stack is not scanned (documented limit). NULL when holders are not on, or when memory
/// ran out (a scan never answers from a partial snapshot of the registry).
///
/// `caller_references` is how many strong references to each target the caller holds where
/// the scan cannot see them (its own stack, hidden words). With it, a target's strong count
/// tells which words own nothing: those are left out and counted (`surplus`). 0 when
/// unsure: a count too low only ever keeps more words.
char *cholders_scan_json(const uintptr_t *targets, size_t count, int max_depth, int max_paths,
                         int caller_references);
void cholders_free(char *json);

#ifdef __cplusplus
}
#endif

#endif
