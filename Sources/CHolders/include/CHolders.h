#ifndef CHOLDERS_H
#define CHOLDERS_H

// Who still holds a Swift object: a registry of live Swift objects fed by libswiftCore's
// allocation and release hooks, and a reference scan over the process's writable memory
// that names each holder from the runtime's own metadata. A scan's answer per object is the
// `holders` record's value (HOLDERS-VALUE in docs/log-format.md) as data.

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
/// Bytes from the process (a type, field or symbol name, a module path that may be no
/// valid UTF-8): `length` bytes at `bytes`, not NUL-terminated.
typedef struct {
  const char *bytes;
  size_t length;
} cholders_text;

/// Where a path starts (the HOLDERS-VALUE's `root.kind`), in the order paths are listed.
enum {
  CHOLDERS_ROOT_GLOBAL = 0,
  CHOLDERS_ROOT_STACK = 1,
  CHOLDERS_ROOT_CYCLE = 2,
  CHOLDERS_ROOT_HEAP = 3,
  CHOLDERS_ROOT_NONE = 4
};
typedef struct {
  int kind;
  int64_t tid;  // STACK: the thread whose stack holds the word, -1 when unknown
  int has_symbol;  // GLOBAL: 1 with `symbol`, 0 with `offset` instead
  cholders_text symbol;  // GLOBAL: the data symbol, demangled, without `static ` or type
  uintptr_t offset;  // GLOBAL without symbol: the word's offset in its module
  cholders_text module;  // GLOBAL: the loaded object's path (empty when unknown)
} cholders_root;

/// What a step's word is in its holder: a field, an element, a closure's captures, or
/// nothing the metadata names.
enum {
  CHOLDERS_STEP_UNNAMED = 0,
  CHOLDERS_STEP_FIELD = 1,
  CHOLDERS_STEP_ELEMENT = 2,
  CHOLDERS_STEP_CAPTURES = 3
};
typedef struct {
  cholders_text type;
  uintptr_t object;  // the holder's address
  uint32_t offset;  // of the word in the holder
  int kind;  // CHOLDERS_STEP_*
  cholders_text field;  // FIELD
  int64_t element, count;  // ELEMENT
  size_t capture_count;  // CAPTURES: the names given
  const cholders_text *captures;
  int64_t more_captures;  // CAPTURES: past those, counted
} cholders_step;

typedef struct {
  cholders_root root;
  size_t step_count;  // from the root down to the direct holder
  const cholders_step *steps;
} cholders_path;

/// One target's answer: a HOLDERS-VALUE's members, or `found` 0 (`null`: the target is no
/// live registered object).
typedef struct {
  int found;
  uint64_t direct, more, surplus, scan_us;
  size_t path_count;  // at most max_paths
  const cholders_path *paths;
} cholders_holders;

typedef struct {
  size_t count;
  const cholders_holders *targets;  // one per target, in order
  void *memory;  // private: the tool memory all of it lives in
} cholders_scan_result;

/// Scans for who holds each of the `count` objects at `targets` (object addresses): one
/// answer per target, in order. NULL when holders are not on, or when memory ran out (a scan
/// never answers from a partial snapshot of the registry). The calling thread's own stack is
/// not scanned (documented limit).
///
/// The result, its strings included, lives in tool memory that scans skip, so the holders'
/// addresses in it are never found as holders by the next scan; cholders_scan_free frees it
/// at once. The caller writes the `holders` record from it.
///
/// `caller_references` is how many strong references to each target the caller holds where
/// the scan cannot see them (its own stack, hidden words). With it, a target's strong count
/// tells which words own nothing: those are left out and counted (`surplus`). 0 when
/// unsure: a count too low only ever keeps more words.
cholders_scan_result *cholders_scan(const uintptr_t *targets, size_t count, int max_depth,
                                    int max_paths, int caller_references);
void cholders_scan_free(cholders_scan_result *result);

/// Frees a JSON text a C writer returned (cholders_holders_json, the census).
void cholders_free(char *json);

#ifdef __cplusplus
}
#endif

#endif
