// The whole-process leak census: which live Swift objects the program can no longer reach,
// grouped as Apple's `leaks` groups them (ROOT CYCLE, ROOT LEAK).
//
// The method is CPython's cycle collector's, confirmed by a root scan:
// 1. copy every registered object's strong count (the rows: the registry's bitmaps, read in
//    place, census_rows.c; the header is read from memory and re-validated: metadata an
//    allocation used, not deiniting);
// 2. subtract each owning reference that another registered object's words hold (spare bits
//    stripped, SWIFT_ABI_DEFAULT_64BIT_SPARE_BITS_MASK; words the metadata calls unowned, or
//    array slots past the count, own nothing). A count left over is a holder outside the
//    Swift heap: a stack, a register, a global, malloc'ed memory, `Unmanaged`, or a retain
//    too many;
// 3. read every root (thread stacks from their stack pointers, module data, TLS, and words
//    of malloc chunks that are neither Swift objects nor free); an object with a count left
//    over AND a root word pointing into it is held from outside; one with a count left over
//    and no root word is over-retained (a leak);
// 4. mark through owning references from those held objects; objects waiting in a
//    DeallocQueue stop the mark, and what only they reach is *delayed*, not leaked;
// 5. group the unmarked objects by strongly connected components (Tarjan): a component no
//    other unmarked object references is a ROOT CYCLE (more than one object, or a
//    self-reference) or a ROOT LEAK; every other unmarked object joins the group of the
//    first root that reaches it.
//
// Why counts and not only a scan: a conservative scan of roots mistakes a dead stack slot
// for a holder and hides a cycle behind it (LSan missed 3 of 13 objects on the census test
// program); a cycle's members have no count left over once the cycle's own references are
// subtracted, so a stale word cannot keep it. The trade-off: a word in a Swift object that
// owns nothing but looks like a reference (an `Unmanaged` stored as a field, an integer
// that equals an address) is subtracted as if it owned, which can make an object held only
// from outside look garbage; the metadata rules out the unowned kinds it can name.
//
// Memory: the rows (a copy of the registry's bitmaps, about a byte per object), plus per
// object a flag byte, a 16-bit count, an edge count byte (and a 32-bit edge offset per 16
// rows), a 16-bit type and a size byte, plus 4 bytes per owning reference and a bounded
// mark list; everything in tool memory (never a root). `extra_bytes` in the stats is what
// of it was in use at the end. The other threads are parked while memory is read
// (census_threads.c), so no reference moves between what was read and what was not.
//
// The files: this one runs the steps and marks; census_rows.c numbers the objects;
// census_read.c reads memory (steps 1-3),
// census_rules.c says which words of a type own, census_group.c groups (step 5),
// census_names.c names types and fields, census_output.c writes the record and the text,
// census_growth.c follows checkpoints' growth.
#define _GNU_SOURCE

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "census.h"

/// What a census maps whatever the heap's size: two read windows and the type rules
/// (reserved; a rule's page is touched only when a type lands on it).
#define CENSUS_FIXED_BYTES (2 * WINDOW_BYTES + TYPE_SLOTS * sizeof(word_rule))

static pthread_mutex_t census_lock = PTHREAD_MUTEX_INITIALIZER;
static cholders_census_stats last_stats;

// A fork waits for a census under way (fork.c's prepare takes its lock first; a forking
// thread the census parked runs on once it is let go), so the child never inherits a census
// half done: its lock is free and no thread of its own is parked.
void ch_census_fork_prepare(void) { pthread_mutex_lock(&census_lock); }
void ch_census_fork_after(void) { pthread_mutex_unlock(&census_lock); }

void cholders_last_census_stats(cholders_census_stats *out) {
  pthread_mutex_lock(&census_lock);
  *out = last_stats;
  pthread_mutex_unlock(&census_lock);
}

static uint64_t monotonic_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}


// ---- marking ----------------------------------------------------------------------------


/// The mark's work list: bounded (a 16th of the rows, and 4k more), so that the census
/// costs no 4 bytes per object for it. A row that finds it full is flagged CF_UNSCANNED
/// (already marked, its edges not yet followed) and picked up by a sweep over the flags
/// once the list drains: a wide object (an array of every object) costs a few sweeps of one
/// byte per row instead of a slot per row.
typedef struct {
  int32_t *rows;
  size_t count, capacity;
  size_t sweep_from;  // no row below it is CF_UNSCANNED
} mark_list;

static inline void mark_push(ch_census *c, mark_list *list, int32_t row, uint8_t flag) {
  if (list->count < list->capacity) {
    c->flags[row] |= flag;
    list->rows[list->count++] = row;
    return;
  }
  c->flags[row] |= flag | CF_UNSCANNED;
  if ((size_t)row < list->sweep_from) list->sweep_from = (size_t)row;
}

/// Refills an empty list from the rows flagged CF_UNSCANNED; 0 when there were none.
static int mark_refill(ch_census *c, mark_list *list) {
  size_t i = list->sweep_from;
  for (; i < c->row_count && list->count < list->capacity; i++) {
    if (!(c->flags[i] & CF_UNSCANNED)) continue;
    c->flags[i] &= (uint8_t)~CF_UNSCANNED;
    list->rows[list->count++] = (int32_t)i;
  }
  list->sweep_from = i;
  return list->count > 0;
}

/// Marks from the rows in `list` through owning edges, setting `flag`; rows with `barrier`
/// are neither marked nor followed.
///
/// A word that may only look like a reference (edge_target) is followed only into an
/// object whose count is not made up by the references vouched for: a legitimate reference
/// inside a struct is then part of that count, while a stale copy (an enum case's unused
/// payload bytes hold whatever the stack had, and the recorder's event buffer copies such
/// values) cannot keep a garbage cycle, whose count its own references make up.
static void mark(ch_census *c, mark_list *list, uint8_t flag, uint8_t barrier) {
  do {
    while (list->count > 0) {
      int32_t x = list->rows[--list->count];
      uint32_t first = ch_census_first_edge(c, x), end = first + ch_census_edge_count(c, x);
      for (uint32_t e = first; e < end; e++) {
        int32_t t = edge_target(c->edges[e]);
        if (t < 0 || (c->flags[t] & (CF_MARKED | CF_DELAYED | barrier))) continue;
        if (c->edges[e] < 0 && !(c->flags[t] & CF_RC_UNKNOWN) && ch_census_refs(c, t) <= 0) {
          continue;
        }
        mark_push(c, list, t, flag);
      }
    }
  } while (mark_refill(c, list));
}

// ---- the entry point ---------------------------------------------------------------------

static char *failure(ch_census *c, const char *why) {
  c->error = why;
  return NULL;
}

/// What every census maps whatever the heap's size (CENSUS_FIXED_BYTES).
typedef struct {
  rules rules;
  uint64_t *root_buffer;  // WINDOW_BYTES, for the root pass
  window window;  // for the object pass
  finder finder;
} fixed_tables;

static int make_fixed_tables(ch_census *c, fixed_tables *t) {
  // Bump memory is a fresh mapping (arena.c), zero until written: the tables need no
  // clearing, and the pages of the type rules no type uses are never touched.
  t->rules.slots = ch_bump_alloc(&c->bump, TYPE_SLOTS * sizeof(word_rule));
  t->rules.array_descriptor = (uintptr_t)dlsym(RTLD_DEFAULT, "$ss23_ContiguousArrayStorageCMn");
  t->rules.count = 0;
  t->root_buffer = ch_bump_alloc(&c->bump, WINDOW_BYTES);
  t->window = (window){ch_bump_alloc(&c->bump, WINDOW_BYTES), 0, 0};
  t->finder = (finder){c};
  c->types = t->rules.slots;
  return t->rules.slots && t->root_buffer && t->window.buffer;
}

/// The per-row arrays, sized by the rows; returns the edge table's capacity, 0 when memory
/// ran out. The tables sized for the worst case (edges, and the rows whose size, count or
/// edge count does not fit its row's bytes) are reserved, not touched, beyond what is used.
static size_t make_row_arrays(ch_census *c) {
  size_t n = c->row_count;
  c->flags = ch_bump_alloc(&c->bump, n + 1);
  c->refs = ch_bump_alloc(&c->bump, (n + 1) * sizeof(int16_t));
  c->large_ref_capacity = n + 1;
  c->large_refs = ch_bump_alloc(&c->bump, c->large_ref_capacity * sizeof(ch_large_refs));
  c->edge_counts = ch_bump_alloc(&c->bump, n + 1);
  c->edge_blocks = ch_bump_alloc(&c->bump, (n / CH_EDGE_BLOCK + 2) * sizeof(uint32_t));
  c->type_of = ch_bump_alloc(&c->bump, (n + 1) * sizeof(uint16_t));
  c->size_of = ch_bump_alloc(&c->bump, n + 1);
  c->large_size_capacity = n + 1;
  c->large_sizes = ch_bump_alloc(&c->bump, c->large_size_capacity * sizeof(ch_large_size));
  // An object's owning words are at most its words: bounded by the registry's bytes.
  size_t edge_capacity = n * 16 + (1u << 16);
  if (edge_capacity > UINT32_MAX) edge_capacity = UINT32_MAX;
  c->edges = ch_bump_alloc(&c->bump, edge_capacity * sizeof(int32_t));
  c->large_count_capacity = edge_capacity / CH_EDGES_LARGE + 1;
  c->large_counts =
      ch_bump_alloc(&c->bump, c->large_count_capacity * sizeof(ch_large_count));
  if (!c->flags || !c->refs || !c->large_refs || !c->edge_counts || !c->edge_blocks || !c->type_of ||
      !c->size_of || !c->large_sizes || !c->edges || !c->large_counts) {
    return 0;
  }
  return edge_capacity;
}

/// Everything read while the other threads are parked: the rows, the objects and the
/// roots. What runs meanwhile allocates nothing with malloc but the names of types met for
/// the first time (the rules), and opendir in ch_regions; a parked thread holding such a
/// lock makes that wait, bounded by the park. Returns why it failed, or NULL.
static const char *read_parked(ch_census *c, fixed_tables *t, uintptr_t own_frame) {
  // Rows short of registered objects would call the missing ones' referents leaked.
  // In tool memory, not in `c`: the first and last rows' addresses must not sit in a frame
  // above the census's own, which the root pass reads.
  c->rows = ch_bump_alloc(&c->bump, sizeof(ch_rows));
  if (c->rows == NULL || !ch_rows_build(c->rows, &c->bump)) {
    return "out of memory for the census's rows";
  }
  c->row_count = c->rows->count;
  size_t edge_capacity = make_row_arrays(c);
  if (edge_capacity == 0) return "out of memory for the census's marks";
  ch_region *regions = NULL;
  int regions_incomplete = 0;
  size_t region_count = ch_regions(&c->bump, &regions, 0, &regions_incomplete);
  // A root left unread would make what only it holds a leak: no census rather than a wrong one.
  if (regions_incomplete) return "could not list every memory region to read for roots";
  const char *why = ch_census_object_pass(c, &t->finder, &t->rules, &t->window, edge_capacity);
  if (why) return why;
  c->type_count = t->rules.count;
  ch_census_root_pass(c, regions, region_count, t->root_buffer, own_frame);
  return NULL;
}

/// Marks what the program reaches, then what only queued objects keep (delayed). Returns
/// why it failed, or NULL.
static const char *mark_reachable(ch_census *c, const finder *f) {
  const cholders_census_pending *p = c->pending;
  size_t pending_count = p ? p->count : 0;
  c->pending_rows = ch_bump_alloc(&c->bump, (pending_count + 1) * sizeof(int32_t));
  if (c->pending_rows == NULL) return "out of memory";
  for (size_t i = 0; i < pending_count; i++) {
    int32_t row = ch_census_exact(f, p->hidden[i] ^ CHOLDERS_CENSUS_HIDE);
    c->pending_rows[i] = row >= 0 && (c->flags[row] & CF_VALID) ? row : -1;
    if (c->pending_rows[i] >= 0) c->flags[row] |= CF_PENDING;
  }
  mark_list list = {NULL, 0, (1u << 12) + c->row_count / 16, c->row_count};
  c->mark_capacity = list.capacity;
  list.rows = ch_bump_alloc(&c->bump, list.capacity * sizeof(int32_t));
  if (list.rows == NULL) return "out of memory for the census's work list";
  // Held from outside: a count left over and a root word (or a count that cannot be read).
  for (size_t i = 0; i < c->row_count; i++) {
    uint8_t flags = c->flags[i];
    if (!(flags & CF_VALID) || (flags & CF_PENDING)) continue;
    int held = (flags & CF_RC_UNKNOWN) || ((flags & CF_ROOT_WORD) && ch_census_refs(c, (int32_t)i) != 0);
    if (held) mark_push(c, &list, (int32_t)i, CF_MARKED);
  }
  mark(c, &list, CF_MARKED, CF_PENDING);
  for (size_t i = 0; i < pending_count; i++) {
    int32_t row = c->pending_rows[i];
    if (row < 0 || (c->flags[row] & (CF_MARKED | CF_DELAYED))) continue;
    mark_push(c, &list, row, CF_DELAYED);
  }
  mark(c, &list, CF_DELAYED, 0);
  for (size_t i = 0; i < c->row_count; i++) c->delayed += (c->flags[i] & CF_DELAYED) != 0;
  return NULL;
}

/// The census proper, with the lock held; on failure sets c->error and returns NULL.
static char *run(ch_census *c, char **text) {
  // The census's own frames (below this one) hold nothing of the program's.
  uintptr_t own_frame = (uintptr_t)__builtin_frame_address(0);
  ch_malloc_learn_key();
  fixed_tables t;
  if (!make_fixed_tables(c, &t)) return failure(c, "out of memory");
  ch_park_threads(&c->park);
  const char *why = read_parked(c, &t, own_frame);
  ch_unpark_threads(&c->park);
  if (why) return failure(c, why);
  ch_census_subtract_internal(c);
  why = mark_reachable(c, &t.finder);
  if (why) return failure(c, why);
  if (!ch_census_group(c)) return failure(c, "out of memory for the census's groups");
  c->total_us = (monotonic_ns() - c->started_ns) / 1000;
  char *json = ch_census_render(c, text);
  // What the census wrote or read of its memory (nothing is given back before the end), but
  // the fixed tables: rows, marks, counts, types, sizes, edges, the work list, the memory
  // map and free chunks read for roots, the groups and the output's tables.
  size_t fixed = ch_resident_bytes(t.rules.slots, TYPE_SLOTS * sizeof(word_rule)) +
                 ch_resident_bytes(t.root_buffer, WINDOW_BYTES) +
                 ch_resident_bytes(t.window.buffer, WINDOW_BYTES);
  size_t resident = ch_bump_resident(&c->bump);
  c->resident_bytes = resident > fixed ? resident - fixed : 0;
  return json;
}

char *cholders_census_json(const cholders_census_pending *pending, const char *label,
                           char **text) {
  if (text) *text = NULL;
  ch_fork_handlers_install();  // holders' start did, unless holders never started
  pthread_mutex_lock(&census_lock);
  int guard = ch_in_tool;
  ch_in_tool = 1;
  ch_census c;
  memset(&c, 0, sizeof c);
  c.started_ns = monotonic_ns();
  c.label = label ? label : "";
  c.pending = pending;
  char *json = NULL;
  if (cholders_state() != CHOLDERS_ON) {
    c.error = cholders_state() == CHOLDERS_REFUSED ? cholders_problem()
                                                   : "the live-object registry is not on "
                                                     "(set DEALLOCTRACE_LEAKS=1 before the "
                                                     "process starts)";
  } else if (ch_asan_on()) {
    // The census reads glibc's chunk headers and free chunks (census_read.c), which
    // AddressSanitizer's allocator does not have; holder paths are taught ASan (asan.c).
    c.error = "this process runs under AddressSanitizer, whose allocator has none of the "
              "glibc chunk headers the census reads";
  } else {
    __builtin_unwind_init();  // this thread's callee-saved registers onto its stack
    json = run(&c, text);
  }
  if (c.error) {
    c.total_us = (monotonic_ns() - c.started_ns) / 1000;
    json = ch_census_render(&c, text);
  }
  cholders_census_stats stats = {0};
  for (size_t i = 0; i < c.row_count && c.flags; i++) stats.objects += (c.flags[i] & CF_VALID) != 0;
  stats.edges = c.edge_count;
  stats.unreachable = c.unreachable;
  stats.delayed = c.delayed;
  stats.threads_stopped = c.park.stopped;
  stats.threads_unstopped = c.park.unstopped;
  stats.total_us = c.total_us;
  // And the output handed back (malloc'ed: the record, and the text when asked for).
  stats.extra_bytes = c.resident_bytes ? c.resident_bytes + (json ? strlen(json) : 0) +
                                             (text && *text ? strlen(*text) : 0)
                                       : 0;
  stats.fixed_bytes = CENSUS_FIXED_BYTES;
  stats.registry_bytes = ch_registry_resident();
  last_stats = stats;
  ch_bump_reset(&c.bump);
  ch_in_tool = guard;
  pthread_mutex_unlock(&census_lock);
  // The holder paths of growing types' instances: scans of their own, outside the lock.
  return ch_census_growth_json(json, &c);
}
