// Shared declarations of the census files (census.c, census_threads.c, census_output.c);
// not part of any public header.
#ifndef CHOLDERS_CENSUS_INTERNAL_H
#define CHOLDERS_CENSUS_INTERNAL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "CHoldersCensus.h"
#include "internal.h"

// ---- census_threads.c --------------------------------------------------------------------
#define CH_PARK_MAX_THREADS 4096
typedef struct {
  size_t stopped, unstopped, sent;
  int installed;
  struct sigaction previous;
} ch_park;
/// Parks every other thread of the process in a signal handler (census_threads.c says why
/// and what it costs). Returns how many were parked; `park` says how many were not.
int ch_park_threads(ch_park *park);
void ch_unpark_threads(ch_park *park);

// ---- census.c: the result the output files render ----------------------------------------
/// Per-row flags.
enum {
  CF_VALID = 1,  // a live Swift object (metadata known, not deiniting, plausible chunk)
  CF_ROOT_WORD = 2,  // a root word (stack, globals, TLS, non-Swift heap) points into it
  CF_RC_UNKNOWN = 4,  // its strong count could not be read (immortal, side table unread)
  CF_MARKED = 8,  // reachable from the program
  CF_PENDING = 16,  // waiting in a DeallocQueue
  CF_DELAYED = 32,  // reachable only through objects waiting in a queue
};

/// One line of a group's tree, in depth-first order.
typedef struct {
  int32_t object;  // row
  int32_t parent;  // index of the parent line, -1 for the root
  int32_t depth;
  int back;  // an edge back to an object shown above (CYCLE BACK TO)
  uint32_t offset;  // the parent's word that points here
  uint64_t retained_count, retained_bytes;  // this object and what it alone keeps
} ch_tree_line;

typedef struct {
  uintptr_t metadata;
  uint64_t count, bytes;
} ch_type_count;

#define CH_GROUP_TYPES 16
#define CH_TREE_LINES 64
#define CH_CYCLE_EDGES 16

typedef struct {
  int cycle;  // ROOT CYCLE (else ROOT LEAK)
  int32_t root;  // row shown first
  uint64_t count, bytes;  // the whole group
  ch_type_count types[CH_GROUP_TYPES];
  size_t type_count;
  uint64_t other_count, other_bytes;  // types past CH_GROUP_TYPES
  // The cycle through the root: cycle_rows[i] holds the word at cycle_offsets[i] that
  // points at cycle_rows[i + 1] (the last one points back at the first).
  int32_t cycle_rows[CH_CYCLE_EDGES];
  uint32_t cycle_offsets[CH_CYCLE_EDGES];
  size_t cycle_length;
  ch_tree_line tree[CH_TREE_LINES];
  size_t tree_count;
  uint64_t hash;  // finding id: the shape of types and fields
  int32_t same_as;  // the first group of the same id, or -1
  uint32_t instances;  // groups with this id (on the first one)
  int library;  // every typed member comes from a library module
} ch_group;

typedef struct {
  ch_bump bump;
  ch_entry *rows;
  size_t row_count;
  uint8_t *flags;
  int32_t *refs;  // strong count minus references from other objects; later reused
  uint32_t *edge_start;  // row_count + 1 offsets into `edges`
  int32_t *edges;  // target rows
  uint32_t *edge_offsets;  // NULL: offsets are found again by reading the holder
  size_t edge_count;
  ch_group *groups;
  size_t group_count, group_capacity;
  const char *label;
  const cholders_census_pending *pending;
  int32_t *pending_rows;  // per pending entry, its row or -1
  const char *error;  // why the census could not run, or NULL
  uint64_t unreachable, unreachable_bytes, delayed, live_bytes;
  ch_park park;
  uint64_t started_ns, total_us;
} ch_census;

/// The type name of the object with `metadata`: "closure context", "box", or the runtime's
/// qualified name.
const char *ch_census_type_name(uintptr_t metadata, size_t *length);
/// The name of the word at `offset` in `row`'s object ("payment", "[2]", "captures"), or
/// NULL when it has none; written into `buffer`.
const char *ch_census_edge_name(ch_census *c, int32_t row, uint32_t offset, char *buffer,
                                size_t capacity);
/// The offset of the first owning word in `holder` that points at `target`, or 0.
uint32_t ch_census_edge_offset(ch_census *c, int32_t holder, int32_t target);

// ---- census_fields.c ---------------------------------------------------------------------
/// Bit i set when the word at 16 + 8 i of an instance of the class with `metadata` is a
/// stored property of a plain number or identity type (owns nothing); i < `words` (≤ 64).
uint64_t ch_census_plain_fields(uintptr_t metadata, unsigned words);
/// Whether the `_ContiguousArrayStorage<Element>` with `metadata` holds class references
/// (a class, or a class-bound existential such as AnyObject).
int ch_census_array_of_references(uintptr_t metadata);

// ---- census_output.c ---------------------------------------------------------------------
/// The census record's members as JSON, and (when `text` is not NULL) the leaks-style text.
char *ch_census_render(ch_census *c, char **text);

#endif
