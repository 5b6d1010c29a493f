// The reference scan: who holds each target, as the shortest path from a root.
//
// One scan serves all targets of a call: level by level, one pass over every scannable
// region looks up each aligned word in a hash set of the current frontier (the targets,
// then the objects found to hold them, ...), so the cost is one memory pass per level, not
// per target. Hits are mapped to the registered object that encloses them (its header is
// re-validated from the copy the first pass read: metadata unchanged, not deiniting), or
// to a root: a loaded object's globals, a thread stack, or unregistered heap memory (but not
// a stale word in a chunk glibc's main arena holds free: heap.c). The
// levels stop at max_depth, or earlier once every direct holder has a path from a global
// or a stack. Then the words that the target's strong count rules out are dropped and
// counted (drop_surplus), and each remaining direct holder gets its best path by
// a breadth-first walk up the discovered graph: from a global or a stack (shortest; a global
// wins a tie), else a cycle back to the target, else the unregistered-heap word, else where
// the depth limit cut.
//
// Memory is read with process_vm_readv (ch_read), which fails instead of faulting when
// another thread unmaps a region mid-scan; everything the scan keeps lives in tool memory
// that the scan itself skips.
#define _GNU_SOURCE

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "CHoldersExtras.h"
#include "internal.h"

extern char *swift_demangle(const char *mangled, size_t length, char *out_buffer,
                            size_t *out_buffer_size, uint32_t flags);

enum { EDGE_OBJECT = 0, ROOT_GLOBAL = 1, ROOT_STACK = 2, ROOT_HEAP = 3 };
// Path categories, in output order: the answer's root kinds.
enum {
  PATH_GLOBAL = CHOLDERS_ROOT_GLOBAL,
  PATH_STACK = CHOLDERS_ROOT_STACK,
  PATH_CYCLE = CHOLDERS_ROOT_CYCLE,
  PATH_HEAP = CHOLDERS_ROOT_HEAP,
  PATH_NONE = CHOLDERS_ROOT_NONE
};

#define CHUNK (1u << 20)
#define MAX_HITS_PER_LEVEL (1u << 20)
#define MAX_DIRECT 256
#define MAX_CHAIN 64
#define TARGET_PARENTS 1024
#define HOLDER_PARENTS 32
// Words in a global or on a stack still taken for a node past its cap: each is a root, and
// the first to go would be the real owner's (rooted paths first).
#define ROOTS_PAST_CAP 64

#define MAX_WALKS 64

typedef struct {
  uintptr_t start;  // the heap mapping's start
  int ok;  // the walk read as glibc's: `ranges` is right
  uintptr_t *ranges;
  size_t count;
} heap_walk;

typedef struct {
  uintptr_t word_address;
  int32_t child;  // the node the word points at
  int32_t holder;  // the node of the object holding the word (EDGE_OBJECT), else -1
  int32_t region;
  int32_t next;  // next edge into the same child
  uint32_t offset;
  uint8_t kind;
  uint8_t named;  // EDGE_OBJECT: the holder's metadata names the word (a field, element, capture)
} edge;

typedef struct {
  size_t row;  // index in the snapshot
  int32_t first_edge;
  int32_t level;
  uint32_t stamp;
  int32_t via;  // during the upward walk: the edge that led here from below
  uint32_t parents;  // edges into this node
  uint32_t skipped;  // hits on this node past the cap (counted, not followed)
  uint32_t roots_past_cap;  // root words taken past the cap
} node;

typedef struct {
  ch_bump bump;
  ch_entry *rows;
  size_t row_count;
  uint8_t *valid;
  int32_t *node_of_row;
  ch_region *regions;
  size_t region_count;
  node *nodes;
  size_t node_count, node_capacity;
  edge *edges;
  size_t edge_count, edge_capacity;
  uint64_t *buffer;
  uintptr_t skip_start, skip_end;  // the caller's target buffer
  uint32_t stamp;
  // Words of the first pass that may point at a registered object (a filter over all
  // registry addresses), so that later levels scan this list instead of all memory again.
  uint64_t *registry_bits;  // 2^24-bit filter on address bits 4..27
  uintptr_t registry_low, registry_high;
  uintptr_t *candidates;  // pairs: word address, masked value
  size_t candidate_count, candidate_capacity;
  int candidates_overflowed;
  // Free chunks of glibc's malloc heaps, each walked the first time a word in it is hit.
  heap_walk walks[MAX_WALKS];
  size_t walk_count;
  int free_state;  // for the stats: 0 no walk, -1 the main arena's walk failed, else 1
  size_t free_count;  // for the stats: free ranges found
  uint64_t free_walk_us;
} scan;

static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static cholders_scan_stats last_stats;  // under scan_lock

/// In a forked child: the thread that held the lock (a scan in progress) is not there.
void ch_scan_fork_child(void) { pthread_mutex_init(&scan_lock, NULL); }

void cholders_last_scan_stats(cholders_scan_stats *out) {
  pthread_mutex_lock(&scan_lock);
  *out = last_stats;
  pthread_mutex_unlock(&scan_lock);
}

static uint64_t cpu_now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static uint64_t now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/// How many snapshot rows start at or below `address` (rows are sorted by address).
static size_t rows_at_or_below(const scan *s, uintptr_t address) {
  return SORTED_ROWS_AT_OR_BELOW(s->rows, s->row_count, address, address);
}

/// The snapshot row whose object encloses `address`, or -1.
static ptrdiff_t enclosing_row(const scan *s, uintptr_t address) {
  size_t count = rows_at_or_below(s, address);
  if (count == 0) return -1;
  const ch_entry *row = &s->rows[count - 1];
  return address < row->address + row->size ? (ptrdiff_t)(count - 1) : -1;
}

/// The snapshot row of the object at `address` (its extent may not be known yet), or -1.
static ptrdiff_t exact_row(const scan *s, uintptr_t address) {
  size_t count = rows_at_or_below(s, address);
  return count > 0 && s->rows[count - 1].address == address ? (ptrdiff_t)(count - 1) : -1;
}

/// Fills in a row from the memory the first pass read: `header` holds the object's first
/// two words and `chunk_size_word` the glibc chunk header word before it. The row is a live
/// object's when an allocation used its metadata, it is not deiniting, and its block lies
/// within `region_end`; then its extent is the block's usable size, which is what
/// tail-allocated storage (arrays, ManagedBuffer) grows into: glibc's chunk size, or under
/// AddressSanitizer the size of the live block that starts at the address (asan.c).
static int adopt_row(ch_entry *row, const uint64_t *header, uint64_t chunk_size_word,
                     uintptr_t region_end) {
  uint64_t refcounts = header[1];
  int deiniting = !CH_RC_SLOW(refcounts) && (refcounts & CH_RC_DEINITING);
  if (deiniting || !ch_metadata_known(header[0])) return 0;
  uint64_t size;
  if (ch_asan_on()) {
    size = ch_asan_block_size(row->address);
    if (size < 16) return 0;
  } else {
    // glibc: size in the bits above 3; bit 1 marks an mmap'ed chunk, whose header is two
    // words instead of one borrowed from the next chunk.
    uint64_t chunk_size = chunk_size_word & ~(uint64_t)7;
    uint64_t overhead = (chunk_size_word & 2) ? 16 : 8;
    if (chunk_size < 32) return 0;
    size = chunk_size - overhead;
  }
  if (size > region_end - row->address) return 0;
  row->metadata = header[0];
  row->size = size;
  return 1;
}

static ptrdiff_t region_of(const scan *s, uintptr_t address) {
  size_t low = SORTED_ROWS_AT_OR_BELOW(s->regions, s->region_count, start, address);
  if (low == 0) return -1;
  return address < s->regions[low - 1].end ? (ptrdiff_t)(low - 1) : -1;
}

static int32_t add_node(scan *s, size_t row, int level) {
  if (s->node_of_row[row] >= 0) return s->node_of_row[row];
  if (s->node_count == s->node_capacity) return -1;
  int32_t id = (int32_t)s->node_count++;
  s->nodes[id] = (node){row, -1, level, 0, -1, 0, 0, 0};
  s->node_of_row[row] = id;
  return id;
}

static void add_edge(scan *s, const edge *e) {
  if (s->edge_count == s->edge_capacity) return;
  edge *slot = &s->edges[s->edge_count];
  *slot = *e;
  slot->next = s->nodes[e->child].first_edge;
  s->nodes[e->child].first_edge = (int32_t)s->edge_count;
  s->nodes[e->child].parents++;
  s->edge_count++;
}

// ---- the frontier set --------------------------------------------------------------------

typedef struct {
  uintptr_t *keys;
  int32_t *values;
  uint64_t mask;
  uintptr_t low, high;
  uint64_t *bits;  // 2^20-bit filter on address bits 4..23
} frontier;

static inline uint64_t mix(uintptr_t key) { return (uint64_t)(key >> 4) * 0x9E3779B97F4A7C15ull; }

static int make_frontier(scan *s, frontier *f, const int32_t *ids, size_t count) {
  uint64_t capacity = 16;
  while (capacity < count * 2) capacity *= 2;
  f->keys = ch_bump_alloc(&s->bump, capacity * sizeof(uintptr_t));
  f->values = ch_bump_alloc(&s->bump, capacity * sizeof(int32_t));
  f->bits = ch_bump_alloc(&s->bump, (1u << 20) / 8);
  if (!f->keys || !f->values || !f->bits) return 0;
  memset(f->keys, 0, capacity * sizeof(uintptr_t));
  memset(f->bits, 0, (1u << 20) / 8);
  f->mask = capacity - 1;
  f->low = UINTPTR_MAX;
  f->high = 0;
  for (size_t i = 0; i < count; i++) {
    uintptr_t key = s->rows[s->nodes[ids[i]].row].address;
    uint64_t slot = (mix(key) >> 20) & f->mask;
    while (f->keys[slot] && f->keys[slot] != key) slot = (slot + 1) & f->mask;
    f->keys[slot] = key;
    f->values[slot] = ids[i];
    if (key < f->low) f->low = key;
    if (key > f->high) f->high = key;
    uint64_t bit = (key >> 4) & ((1u << 20) - 1);
    f->bits[bit >> 6] |= 1ull << (bit & 63);
  }
  return 1;
}

static inline int32_t lookup(const frontier *f, uintptr_t key) {
  if (key < f->low || key > f->high || (key & 15)) return -1;
  uint64_t bit = (key >> 4) & ((1u << 20) - 1);
  if (!(f->bits[bit >> 6] & (1ull << (bit & 63)))) return -1;
  uint64_t slot = (mix(key) >> 20) & f->mask;
  while (f->keys[slot]) {
    if (f->keys[slot] == key) return f->values[slot];
    slot = (slot + 1) & f->mask;
  }
  return -1;
}

// ---- one pass over memory ----------------------------------------------------------------

typedef struct {
  uintptr_t word_address;
  int32_t child;
} hit;

static inline void record(hit *hits, size_t *count, size_t capacity, size_t *dropped,
                          uintptr_t address, int32_t child) {
  if (*count < capacity) {
    hits[*count].word_address = address;
    hits[*count].child = child;
    (*count)++;
  } else {
    (*dropped)++;
  }
}

#define REGISTRY_BITS (1u << 24)

static void make_registry_filter(scan *s) {
  s->registry_bits = ch_bump_alloc(&s->bump, REGISTRY_BITS / 8);
  s->candidate_capacity = 1u << 22;
  s->candidates = ch_bump_alloc(&s->bump, s->candidate_capacity * 2 * sizeof(uintptr_t));
  if (s->registry_bits == NULL || s->candidates == NULL || s->row_count == 0) {
    s->candidates_overflowed = 1;
    s->registry_low = 1;
    s->registry_high = 0;
    return;
  }
  memset(s->registry_bits, 0, REGISTRY_BITS / 8);
  for (size_t i = 0; i < s->row_count; i++) {
    uint64_t bit = (s->rows[i].address >> 4) & (REGISTRY_BITS - 1);
    s->registry_bits[bit >> 6] |= 1ull << (bit & 63);
  }
  s->registry_low = s->rows[0].address;
  s->registry_high = s->rows[s->row_count - 1].address;
}

/// The first pass: reads every region once, validates the header of every snapshot object
/// from the copy read, records hits on the targets, and keeps the words that may point at
/// any registered object for the later levels.
static size_t first_pass(scan *s, const frontier *f, hit *hits, size_t capacity,
                         size_t *dropped) {
  size_t count = 0;
  size_t next_row = 0;
  uintptr_t low = s->registry_low, high = s->registry_high;
  for (size_t r = 0; r < s->region_count; r++) {
    const ch_region *region = &s->regions[r];
    for (uintptr_t at = region->start; at < region->end;) {
      size_t want = region->end - at < CHUNK ? region->end - at : CHUNK;
      size_t got = ch_read(s->buffer, at, want) & ~(size_t)7;
      if (got == 0) {
        at += 4096;  // unreadable page (unmapped meanwhile): skip it
        continue;
      }
      size_t words = got / 8;
      for (size_t i = 0; i < words; i++) {
        uintptr_t key = s->buffer[i] & 0x00ffffffffffffffull;
        if (key < low || key > high || (key & 15)) continue;
        uint64_t bit = (key >> 4) & (REGISTRY_BITS - 1);
        if (!(s->registry_bits[bit >> 6] & (1ull << (bit & 63)))) continue;
        uintptr_t address = at + i * 8;
        if (address >= s->skip_start && address < s->skip_end) continue;
        if (s->candidate_count < s->candidate_capacity) {
          s->candidates[s->candidate_count * 2] = address;
          s->candidates[s->candidate_count * 2 + 1] = key;
          s->candidate_count++;
        } else {
          s->candidates_overflowed = 1;
        }
        int32_t child = lookup(f, key);
        if (child >= 0) record(hits, &count, capacity, dropped, address, child);
      }
      uintptr_t end = at + got;
      while (next_row < s->row_count && s->rows[next_row].address < at) next_row++;
      for (; next_row < s->row_count && s->rows[next_row].address + 16 <= end; next_row++) {
        ch_entry *row = &s->rows[next_row];
        const uint64_t *header = &s->buffer[(row->address - at) / 8];
        uint64_t chunk_size_word = 0;
        if (row->address - 8 >= at) {
          chunk_size_word = header[-1];
        } else if (!ch_asan_on()) {
          ch_read(&chunk_size_word, row->address - 8, 8);
        }
        s->valid[next_row] = (uint8_t)adopt_row(row, header, chunk_size_word, region->end);
      }
      at += got;
    }
  }
  return count;
}

/// A later level: looks the frontier up in the first pass's candidate words, or, when
/// those overflowed, reads all memory again.
static size_t later_pass(scan *s, const frontier *f, hit *hits, size_t capacity,
                         size_t *dropped) {
  size_t count = 0;
  if (!s->candidates_overflowed) {
    for (size_t i = 0; i < s->candidate_count; i++) {
      int32_t child = lookup(f, s->candidates[i * 2 + 1]);
      if (child >= 0) record(hits, &count, capacity, dropped, s->candidates[i * 2], child);
    }
    return count;
  }
  for (size_t r = 0; r < s->region_count; r++) {
    const ch_region *region = &s->regions[r];
    for (uintptr_t at = region->start; at < region->end;) {
      size_t want = region->end - at < CHUNK ? region->end - at : CHUNK;
      size_t got = ch_read(s->buffer, at, want) & ~(size_t)7;
      if (got == 0) {
        at += 4096;
        continue;
      }
      for (size_t i = 0; i < got / 8; i++) {
        uintptr_t key = s->buffer[i] & 0x00ffffffffffffffull;
        if (key < f->low || key > f->high) continue;
        int32_t child = lookup(f, key);
        if (child < 0) continue;
        uintptr_t address = at + i * 8;
        if (address >= s->skip_start && address < s->skip_end) continue;
        record(hits, &count, capacity, dropped, address, child);
      }
      at += got;
    }
  }
  return count;
}

// ---- naming ------------------------------------------------------------------------------

static void name_word(scan *s, size_t row, uint32_t offset, ch_name *name) {
  uint64_t header[4] = {0, 0, 0, 0};
  ch_read(header, s->rows[row].address, sizeof header);
  ch_describe(s->rows[row].metadata, header, offset, name);
}

/// Whether `address` (a word outside every registered object) lies in a free chunk of one
/// of glibc's malloc heaps, or under AddressSanitizer in memory it poisoned (a freed block
/// in its quarantine, a redzone): a stale copy left by freed memory, not a holder.
static int in_free_chunk(scan *s, const ch_region *region, uintptr_t address) {
  if (region->kind != CH_REGION_HEAP) return 0;
  if (ch_asan_on()) return ch_asan_poisoned(address);
  if (region->arena == 0) return 0;
  heap_walk *walk = NULL;
  for (size_t i = 0; i < s->walk_count && !walk; i++) {
    if (s->walks[i].start == region->arena_start) walk = &s->walks[i];
  }
  if (walk == NULL) {
    if (s->walk_count == MAX_WALKS) return 0;
    walk = &s->walks[s->walk_count++];
    uint64_t walk_started = now_us();
    walk->start = region->arena_start;
    walk->ok = ch_malloc_free_ranges(&s->bump, region->arena_start, region->arena_end,
                                     region->arena == 1, &walk->ranges, &walk->count);
    s->free_walk_us += now_us() - walk_started;
    s->free_count += walk->count;
    // A failed walk of an anonymous mapping that is no thread heap at all is expected.
    if (s->free_state == 0) s->free_state = 1;
    if (region->arena == 1 && !walk->ok) s->free_state = -1;
  }
  return walk->ok && ch_malloc_is_free(walk->ranges, walk->count, address);
}

/// Turns one level's hits into edges; returns the new frontier's node ids.
/// Whether a word that refers to `child` is past the child's cap of parents and is dropped.
/// A popular object can have many thousands of referring words: a target keeps the first
/// TARGET_PARENTS (the rest are counted in `more`), an intermediate holder only needs a few
/// for a shortest path. This also bounds the naming work per scan. Past the cap, a word in a
/// global or on a stack is still taken (up to ROOTS_PAST_CAP): memory is read in address
/// order, and a library's globals or a thread's stack come after the heap, so the owner's
/// word would otherwise be the one cut.
static int is_past_cap(scan *s, node *child, ptrdiff_t row, uintptr_t address) {
  if (child->parents < (child->level == 0 ? TARGET_PARENTS : HOLDER_PARENTS)) return 0;
  ptrdiff_t region = row >= 0 ? -1 : region_of(s, address);
  int root = region >= 0 && s->regions[region].kind != CH_REGION_HEAP;
  if (!root || child->roots_past_cap >= ROOTS_PAST_CAP) {
    child->skipped++;
    return 1;
  }
  child->roots_past_cap++;
  return 0;
}

/// Fills `e` for a word inside object `row`; 0 when the word is no reference (a dead
/// object's, the header, a stale word). A holder new at this level joins `next` once.
static int object_edge(scan *s, edge *e, ptrdiff_t row, int level, int32_t *next,
                       size_t *next_count, size_t next_capacity) {
  if (!s->valid[row]) return 0;  // a dead object's memory holds nothing
  e->offset = (uint32_t)(e->word_address - s->rows[row].address);
  if (e->offset < 16) return 0;  // the header (metadata, refcounts) is no reference
  ch_name name;
  name_word(s, (size_t)row, e->offset, &name);
  if (name.edge == CH_EDGE_STALE) return 0;
  int32_t holder = add_node(s, (size_t)row, level);
  if (holder < 0) return 0;
  e->holder = holder;
  e->kind = EDGE_OBJECT;
  e->named = name.edge != CH_EDGE_NONE;
  if (s->nodes[holder].level == level && s->nodes[holder].first_edge == -1 &&
      *next_count < next_capacity) {
    // New this level: it joins the next frontier, once (-2 marks "queued"; no edge can
    // point at it during this level, its parents are searched by the next one).
    s->nodes[holder].first_edge = -2;
    next[(*next_count)++] = holder;
  }
  return 1;
}

/// Fills `e` for a word outside every object: a global, a stack slot or a heap word; 0
/// when it is no holder (a weak reference's side table, free malloc memory).
static int root_edge(scan *s, edge *e) {
  // An object with weak references has a side table (malloc memory) whose first word
  // points back at it: no holder.
  uint64_t bits = 0;
  ch_read(&bits, s->rows[s->nodes[e->child].row].address + 8, 8);
  if (ch_is_side_table_word(bits, e->word_address)) return 0;
  ptrdiff_t region = region_of(s, e->word_address);
  if (region >= 0 && in_free_chunk(s, &s->regions[region], e->word_address)) return 0;
  e->region = (int32_t)region;
  int kind = region >= 0 ? s->regions[region].kind : CH_REGION_HEAP;
  e->kind = kind == CH_REGION_DATA ? ROOT_GLOBAL : kind == CH_REGION_STACK ? ROOT_STACK : ROOT_HEAP;
  return 1;
}

static size_t absorb(scan *s, const hit *hits, size_t count, int level, int32_t *next,
                     size_t next_capacity) {
  size_t next_count = 0;
  for (size_t i = 0; i < count; i++) {
    uintptr_t address = hits[i].word_address;
    edge e = {address, hits[i].child, -1, -1, -1, 0, EDGE_OBJECT, 0};
    ptrdiff_t row = enclosing_row(s, address);
    if (is_past_cap(s, &s->nodes[e.child], row, address)) continue;
    int taken = row >= 0 ? object_edge(s, &e, row, level, next, &next_count, next_capacity)
                         : root_edge(s, &e);
    if (taken) add_edge(s, &e);
  }
  for (size_t k = 0; k < next_count; k++) {
    if (s->nodes[next[k]].first_edge == -2) s->nodes[next[k]].first_edge = -1;
  }
  return next_count;
}

// ---- paths -------------------------------------------------------------------------------

typedef struct {
  int category;
  int32_t chain[MAX_CHAIN];  // edges, from the root's edge down to the direct edge
  int length;
} path;

/// The best path for the direct edge `direct` into `target`.
/// The best root found so far by best_path's breadth-first search.
typedef struct {
  int32_t edge;  // the edge from the root, -1 for none (a cycle through the direct holder)
  int32_t category;
  int depth;
  int32_t deepest;  // the last node searched: an unrooted path's start
} path_search;

/// The category of the path that edge `p` starts, or -1 when `p` comes from an object that
/// is not the target: a holder further up, to search.
static int edge_category(const edge *p, int32_t target) {
  if (p->kind == ROOT_GLOBAL) return PATH_GLOBAL;
  if (p->kind == ROOT_STACK) return PATH_STACK;
  if (p->kind == ROOT_HEAP) return PATH_HEAP;
  return p->holder == target ? PATH_CYCLE : -1;
}

/// Rooted paths compete on length (a global wins a tie); anything rooted beats a cycle,
/// which beats a heap word.
static void consider(path_search *best, int32_t e, int category, int depth) {
  int rooted = category <= PATH_STACK, best_rooted = best->category <= PATH_STACK;
  int better = best->edge < 0 && best->category > PATH_NONE;
  if (!better && rooted && !best_rooted) better = 1;
  if (!better && rooted && best_rooted &&
      (depth < best->depth || (depth == best->depth && category < best->category))) {
    better = 1;
  }
  if (!better && !rooted && !best_rooted && category < best->category) better = 1;
  if (better) {
    best->edge = e;
    best->category = category;
    best->depth = depth;
  }
}

/// Searches up from the direct holder of `direct` (breadth first, each node's `via` the edge
/// it was reached by) for the best root of a path down to `target`.
static path_search search_roots(scan *s, int32_t direct, int32_t target) {
  const edge *d = &s->edges[direct];
  s->stamp++;
  int32_t queue[4096];
  size_t head = 0, tail = 0;
  path_search best = {-1, PATH_NONE + 1, 1 << 30, d->holder};
  if (d->holder == target) {
    best.category = PATH_CYCLE;
    best.depth = 0;
  } else {
    s->nodes[d->holder].stamp = s->stamp;
    s->nodes[d->holder].via = direct;
    queue[tail++] = d->holder;
  }
  while (head < tail) {
    int32_t x = queue[head++];
    int depth = 0;
    for (int32_t v = s->nodes[x].via; v >= 0 && s->edges[v].child != target; depth++) {
      v = s->nodes[s->edges[v].child].via;
    }
    best.deepest = x;
    for (int32_t e = s->nodes[x].first_edge; e >= 0; e = s->edges[e].next) {
      const edge *p = &s->edges[e];
      int category = edge_category(p, target);
      if (category >= 0) {
        consider(&best, e, category, depth);
        continue;
      }
      node *h = &s->nodes[p->holder];
      if (h->stamp != s->stamp && tail < 4096 && depth + 2 < MAX_CHAIN) {
        h->stamp = s->stamp;
        h->via = e;
        queue[tail++] = p->holder;
      }
    }
  }
  return best;
}

static void best_path(scan *s, int32_t direct, int32_t target, path *out) {
  const edge *d = &s->edges[direct];
  out->length = 0;
  if (d->kind != EDGE_OBJECT) {
    out->category = d->kind == ROOT_GLOBAL ? PATH_GLOBAL
                    : d->kind == ROOT_STACK ? PATH_STACK
                                            : PATH_HEAP;
    out->chain[0] = direct;
    out->length = 1;
    return;
  }
  path_search best = search_roots(s, direct, target);
  int32_t start_edge = best.edge;
  if (best.category > PATH_NONE) {
    best.category = PATH_NONE;
    start_edge = -1;
  }
  out->category = best.category;
  // Chain: [start_edge], then the via edges from the node it points at down to the target.
  if (best.category == PATH_CYCLE && d->holder == target) {
    out->chain[out->length++] = direct;
    return;
  }
  int32_t from_node = best.deepest;
  if (start_edge >= 0) {
    out->chain[out->length++] = start_edge;
    from_node = s->edges[start_edge].child;
  }
  for (int32_t v = s->nodes[from_node].via; v >= 0 && out->length < MAX_CHAIN;) {
    out->chain[out->length++] = v;
    if (s->edges[v].child == target) break;
    v = s->nodes[s->edges[v].child].via;
  }
}

/// Whether the direct edges of every target already have a path from a global or stack.
static int all_rooted(scan *s, const int32_t *target_nodes, size_t count) {
  for (size_t t = 0; t < count; t++) {
    if (target_nodes[t] < 0) continue;
    int n = 0;
    for (int32_t e = s->nodes[target_nodes[t]].first_edge;
         e >= 0 && n < TARGET_PARENTS + ROOTS_PAST_CAP;
         e = s->edges[e].next, n++) {
      path p;
      best_path(s, e, target_nodes[t], &p);
      if (p.category > PATH_STACK) return 0;
    }
  }
  return 1;
}

// ---- the answer --------------------------------------------------------------------------
// Built after the search in memory of its own (tool memory, which scans skip), so that it
// outlives the scan's tables and the holders' addresses and names it copies are never
// found as holders by a later scan.

typedef struct {
  ch_bump bump;
  int failed;  // memory ran out: no answer rather than a partial one
} answer;

static void *answer_alloc(answer *a, size_t size) {
  if (size == 0 || a->failed) return NULL;
  void *memory = ch_bump_alloc(&a->bump, size);
  if (memory == NULL) a->failed = 1;
  return memory;
}

static cholders_text copy_text(answer *a, const char *bytes, size_t length) {
  char *copy = answer_alloc(a, length);
  if (copy == NULL) return (cholders_text){"", 0};
  memcpy(copy, bytes, length);
  return (cholders_text){copy, length};
}

static void fill_global(scan *s, answer *a, const edge *e, cholders_root *root) {
  const ch_region *region = e->region >= 0 ? &s->regions[e->region] : NULL;
  const char *module = region && region->module ? region->module : "";
  uintptr_t relative = region ? e->word_address - region->module_base : e->word_address;
  const char *mangled = region && region->module ? ch_elf_object_symbol(module, relative) : NULL;
  root->module = copy_text(a, module, strlen(module));
  root->offset = relative;
  if (mangled == NULL) return;
  char *demangled = swift_demangle(mangled, strlen(mangled), NULL, NULL, 0);
  const char *text = demangled ? demangled : mangled;
  // "static Shop.ImageCache.shared : Shop.ImageCache" -> "Shop.ImageCache.shared"
  if (strncmp(text, "static ", 7) == 0) text += 7;
  const char *colon = strstr(text, " : ");
  root->has_symbol = 1;
  root->symbol = copy_text(a, text, colon ? (size_t)(colon - text) : strlen(text));
  free(demangled);
}

/// Fills the root of `p`; returns how many of its edges the root stands for (a global's,
/// a stack's or a heap word's edge is the root; a cycle and an unrooted path start with a
/// step).
static int fill_root(scan *s, answer *a, const path *p, cholders_root *root) {
  const edge *top = p->length ? &s->edges[p->chain[0]] : NULL;
  *root = (cholders_root){p->category, -1, 0, {"", 0}, 0, {"", 0}};
  if (p->category == PATH_GLOBAL) fill_global(s, a, top, root);
  if (p->category == PATH_STACK && top->region >= 0) root->tid = s->regions[top->region].tid;
  return p->category == PATH_GLOBAL || p->category == PATH_STACK || p->category == PATH_HEAP;
}

static void fill_step(scan *s, answer *a, const edge *e, cholders_step *step) {
  size_t row = s->nodes[e->holder].row;
  ch_name name;
  name_word(s, row, e->offset, &name);
  memset(step, 0, sizeof *step);
  step->type = copy_text(a, name.type, name.type_length);
  step->object = s->rows[row].address;
  step->offset = e->offset;
  step->kind = CHOLDERS_STEP_UNNAMED;
  step->field = (cholders_text){"", 0};
  if (name.edge == CH_EDGE_FIELD) {
    step->kind = CHOLDERS_STEP_FIELD;
    step->field = copy_text(a, name.field, name.field_length);
  } else if (name.edge == CH_EDGE_ELEMENT) {
    step->kind = CHOLDERS_STEP_ELEMENT;
    step->element = name.element;
    step->count = name.count;
  } else if (name.edge == CH_EDGE_CAPTURES) {
    step->kind = CHOLDERS_STEP_CAPTURES;
    cholders_text *captures = answer_alloc(a, (size_t)name.capture_count * sizeof *captures);
    for (int i = 0; captures && i < name.capture_count; i++) {
      captures[i] = copy_text(a, name.captures[i], name.capture_lengths[i]);
    }
    step->captures = captures;
    step->capture_count = captures ? (size_t)name.capture_count : 0;
    step->more_captures = name.more_captures;
  }
}

static void fill_path(scan *s, answer *a, const path *p, cholders_path *out) {
  int first_step = fill_root(s, a, p, &out->root);
  size_t count = p->length > first_step ? (size_t)(p->length - first_step) : 0;
  cholders_step *steps = answer_alloc(a, count * sizeof *steps);
  for (size_t i = 0; steps && i < count; i++) {
    fill_step(s, a, &s->edges[p->chain[first_step + (int)i]], &steps[i]);
  }
  out->steps = steps;
  out->step_count = steps ? count : 0;
}

/// Two direct edges are the same holder when they are the same root (one global symbol or
/// offset, one thread stack) or the same word.
static int same_holder(scan *s, const edge *a, const edge *b) {
  if (a->kind != b->kind) return 0;
  if (a->kind == ROOT_STACK) return a->region == b->region;
  if (a->kind == ROOT_GLOBAL && a->region == b->region && a->region >= 0) {
    const ch_region *region = &s->regions[a->region];
    if (region->module == NULL) return a->word_address == b->word_address;
    const char *x = ch_elf_object_symbol(region->module, a->word_address - region->module_base);
    const char *y = ch_elf_object_symbol(region->module, b->word_address - region->module_base);
    return x ? x == y : a->word_address == b->word_address;
  }
  return a->word_address == b->word_address;
}

/// A direct word whose place names the reference: a global, or a field, element or capture
/// of a Swift object.
static int names_its_reference(const edge *e) {
  return e->kind == ROOT_GLOBAL || (e->kind == EDGE_OBJECT && e->named);
}

/// Leaves out of `directs` the words that the target's strong count shows own nothing, and
/// returns how many it left out (the record's `surplus`).
///
/// Why: a word on a thread's stack, in memory that is no Swift object, or in a Swift object
/// where its metadata names no reference may be a stale copy (a dead frame's slot, a reused
/// malloc chunk that once held the address, an unused bucket), and nothing in the word says
/// so. The count does: when the words that name their reference (a holder's field, element
/// or capture, or a global) plus the caller's own references already make up the target's
/// strong count, no other word can own it. The trade-off: only then is anything left out,
/// so a stale word still shows beside an owner the scan cannot see (a register), and a named
/// word that owns nothing (an `unowned(unsafe)` field) can hide an owner of the other kind;
/// `caller_references` set too low only keeps more.
static size_t drop_surplus(scan *s, int32_t target, int32_t *directs, size_t *direct_count,
                           int caller_references) {
  size_t confirmed = 0;
  for (size_t k = 0; k < *direct_count; k++) {
    confirmed += (size_t)names_its_reference(&s->edges[directs[k]]);
  }
  if (confirmed == *direct_count) return 0;
  int64_t strong = ch_strong_count(s->rows[s->nodes[target].row].address);
  if (strong <= 0 || (int64_t)confirmed + caller_references < strong) return 0;
  size_t kept = 0;
  for (size_t k = 0; k < *direct_count; k++) {
    if (names_its_reference(&s->edges[directs[k]])) directs[kept++] = directs[k];
  }
  size_t dropped = *direct_count - kept;
  *direct_count = kept;
  return dropped;
}

/// `paths` has room for TARGET_PARENTS + ROOTS_PAST_CAP paths.
/// Every distinct direct word of `target` the level kept (TARGET_PARENTS, plus the roots
/// past it), in scan order (edges were linked newest first); `beyond` counts the rest.
static size_t collect_candidates(scan *s, int32_t target, int32_t *candidates, size_t *beyond) {
  size_t count = 0;
  for (int32_t e = s->nodes[target].first_edge; e >= 0; e = s->edges[e].next) {
    int duplicate = 0;
    for (size_t k = 0; k < count && !duplicate; k++) {
      duplicate = same_holder(s, &s->edges[candidates[k]], &s->edges[e]);
    }
    if (duplicate) continue;
    if (count < TARGET_PARENTS + ROOTS_PAST_CAP) {
      candidates[count++] = e;
    } else {
      (*beyond)++;
    }
  }
  for (size_t a = 0, b = count ? count - 1 : 0; a < b; a++, b--) {
    int32_t t = candidates[a];
    candidates[a] = candidates[b];
    candidates[b] = t;
  }
  return count;
}

/// `order` as the indexes of `paths` sorted rooted first, then cycles, then the rest;
/// shorter first; scan order between equals (a stable insertion sort).
static void order_paths(const path *paths, uint32_t *order, size_t count) {
  for (size_t k = 0; k < count; k++) order[k] = (uint32_t)k;
  for (size_t i = 1; i < count; i++) {
    uint32_t current = order[i];
    const path *c = &paths[current];
    size_t j = i;
    while (j > 0 && (paths[order[j - 1]].category > c->category ||
                     (paths[order[j - 1]].category == c->category &&
                      paths[order[j - 1]].length > c->length))) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = current;
  }
}

static void fill_target(scan *s, answer *a, int32_t target, int max_paths,
                        int caller_references, uint64_t scan_us, path *paths,
                        cholders_holders *out) {
  static int32_t candidates[TARGET_PARENTS + ROOTS_PAST_CAP];  // under scan_lock
  static uint32_t order[TARGET_PARENTS + ROOTS_PAST_CAP];
  size_t beyond = 0;
  size_t candidate_count = collect_candidates(s, target, candidates, &beyond);
  beyond += s->nodes[target].skipped;
  size_t surplus = drop_surplus(s, target, candidates, &candidate_count, caller_references);
  // Each gets its best path; the MAX_DIRECT best are the direct holders given paths, the
  // rest are counted.
  for (size_t k = 0; k < candidate_count; k++) best_path(s, candidates[k], target, &paths[k]);
  order_paths(paths, order, candidate_count);
  size_t direct_count = candidate_count < MAX_DIRECT ? candidate_count : MAX_DIRECT;
  beyond += candidate_count - direct_count;
  size_t shown = max_paths < 0 ? 0 : (size_t)max_paths;
  if (shown > direct_count) shown = direct_count;
  cholders_path *shown_paths = answer_alloc(a, shown * sizeof *shown_paths);
  for (size_t k = 0; shown_paths && k < shown; k++) {
    fill_path(s, a, &paths[order[k]], &shown_paths[k]);
  }
  out->found = 1;
  out->direct = direct_count + beyond;
  out->more = direct_count + beyond - shown;
  out->surplus = surplus;
  out->scan_us = scan_us;
  out->path_count = shown_paths ? shown : 0;
  out->paths = shown_paths;
}

// ---- the entry point ---------------------------------------------------------------------

/// A scan's working memory beside `scan`'s own tables, all from its bump allocator.
typedef struct {
  hit *hits;
  int32_t *level_ids;
  int32_t *target_nodes;  // per target: its node, or -1 (unknown or dead)
  path *paths;
} scan_work;

/// Every target's answer from the finished search, in memory of its own; NULL when memory
/// ran out.
static cholders_scan_result *make_answer(scan *s, const scan_work *w, size_t count,
                                         int max_paths, int caller_references,
                                         uint64_t scan_us) {
  answer a = {{NULL}, 0};
  cholders_scan_result *result = answer_alloc(&a, sizeof *result);
  cholders_holders *targets = answer_alloc(&a, (count ? count : 1) * sizeof *targets);
  for (size_t t = 0; targets && t < count; t++) {
    memset(&targets[t], 0, sizeof targets[t]);
    if (w->target_nodes[t] < 0) continue;  // not found: no record
    fill_target(s, &a, w->target_nodes[t], max_paths, caller_references, scan_us, w->paths,
                &targets[t]);
  }
  if (a.failed) {
    ch_bump_reset(&a.bump);
    return NULL;
  }
  *result = (cholders_scan_result){count, targets, a.bump.chunks};
  return result;
}

/// Takes the registry's snapshot and allocates the tables; 0 when memory ran out (a
/// snapshot that left registered objects out would call them dead: no answer rather than
/// a wrong one).
static int prepare_scan(scan *s, scan_work *w, size_t count, cholders_scan_stats *stats,
                        uint64_t started) {
  ch_snapshot_status snapshot;
  s->row_count = ch_registry_snapshot_status(&s->bump, &s->rows, &snapshot);
  stats->objects = s->row_count;
  stats->spans_walked = snapshot.spans_walked;
  stats->snapshot_us = now_us() - started;
  s->valid = ch_bump_alloc(&s->bump, s->row_count + 1);
  s->node_of_row = ch_bump_alloc(&s->bump, (s->row_count + 1) * sizeof(int32_t));
  s->node_capacity = 1u << 20;
  s->nodes = ch_bump_alloc(&s->bump, s->node_capacity * sizeof(node));
  s->edge_capacity = 1u << 21;
  s->edges = ch_bump_alloc(&s->bump, s->edge_capacity * sizeof(edge));
  s->buffer = ch_bump_alloc(&s->bump, CHUNK);
  w->hits = ch_bump_alloc(&s->bump, MAX_HITS_PER_LEVEL * sizeof(hit));
  w->level_ids = ch_bump_alloc(&s->bump, s->node_capacity * sizeof(int32_t));
  w->target_nodes = ch_bump_alloc(&s->bump, (count + 1) * sizeof(int32_t));
  w->paths = ch_bump_alloc(&s->bump, (TARGET_PARENTS + ROOTS_PAST_CAP) * sizeof(path));
  if (snapshot.incomplete || !s->valid || !s->node_of_row || !s->nodes || !s->edges ||
      !s->buffer || !w->hits || !w->level_ids || !w->target_nodes || !w->paths) {
    return 0;
  }
  memset(s->valid, 0, s->row_count + 1);
  memset(s->node_of_row, 0xff, (s->row_count + 1) * sizeof(int32_t));
  return 1;
}

/// Lists the memory to read: 0 when the list would be incomplete.
static int find_regions(scan *s, cholders_scan_stats *stats) {
  uint64_t regions_started = now_us();
  int regions_incomplete = 0;
  // This frame's address, not a local's: under AddressSanitizer a local may live in the
  // thread's fake stack (asan.c), while the frame is always on the thread's real stack.
  uintptr_t own_stack = (uintptr_t)__builtin_frame_address(0);
  s->region_count = ch_regions(&s->bump, &s->regions, own_stack, &regions_incomplete);
  if (regions_incomplete) return 0;
  make_registry_filter(s);
  stats->regions = s->region_count;
  for (size_t r = 0; r < s->region_count; r++) {
    stats->bytes += s->regions[r].end - s->regions[r].start;
  }
  stats->regions_us = now_us() - regions_started;
  return 1;
}

/// The search, level by level: the words that refer to the targets, then to their holders,
/// up to `max_depth` levels or until every target has a rooted path.
static void search_levels(scan *s, scan_work *w, const uintptr_t *targets, size_t count,
                          int max_depth, cholders_scan_stats *stats) {
  size_t level_count = 0;
  for (size_t t = 0; t < count; t++) {
    ptrdiff_t row = exact_row(s, targets[t]);
    w->target_nodes[t] = row >= 0 ? add_node(s, (size_t)row, 0) : -1;
    if (w->target_nodes[t] >= 0 && s->nodes[w->target_nodes[t]].first_edge == -1) {
      int seen = 0;
      for (size_t k = 0; k < level_count; k++) seen |= w->level_ids[k] == w->target_nodes[t];
      if (!seen) w->level_ids[level_count++] = w->target_nodes[t];
    }
  }
  for (int level = 1; level <= max_depth && level_count > 0; level++) {
    frontier f;
    if (!make_frontier(s, &f, w->level_ids, level_count)) break;
    size_t dropped = 0;
    size_t hit_count = level == 1 ? first_pass(s, &f, w->hits, MAX_HITS_PER_LEVEL, &dropped)
                                  : later_pass(s, &f, w->hits, MAX_HITS_PER_LEVEL, &dropped);
    stats->levels++;
    if (level == 1) {
      // Targets that failed their header check are dead: no holders record.
      for (size_t t = 0; t < count; t++) {
        int32_t n = w->target_nodes[t];
        if (n >= 0 && !s->valid[s->nodes[n].row]) w->target_nodes[t] = -1;
      }
    }
    size_t kept = 0;
    for (size_t i = 0; i < hit_count; i++) {
      if (s->valid[s->nodes[w->hits[i].child].row]) w->hits[kept++] = w->hits[i];
    }
    level_count = absorb(s, w->hits, kept, level, w->level_ids, s->node_capacity);
    if (all_rooted(s, w->target_nodes, count)) break;
  }
}

/// The scan's figures once the search is done.
static void note_figures(cholders_scan_stats *stats, const scan *s, uint64_t passes_started,
                         uint64_t elapsed, uint64_t cpu_started) {
  stats->passes_us = now_us() - passes_started;
  stats->total_us = elapsed;
  stats->cpu_us = cpu_now_us() - cpu_started;
  stats->free_walk_us = s->free_walk_us;
  stats->free_ranges = s->free_count;
  stats->free_walk = s->free_state;
  stats->proc_mem = ch_read_through_proc_mem();
}

cholders_scan_result *cholders_scan(const uintptr_t *targets, size_t count, int max_depth,
                                    int max_paths, int caller_references) {
  if (cholders_state() != CHOLDERS_ON) return NULL;
  uint64_t started = now_us();
  pthread_mutex_lock(&scan_lock);
  uint64_t cpu_started = cpu_now_us();
  int guard = ch_in_tool;
  ch_in_tool = 1;
  scan s;
  memset(&s, 0, sizeof s);
  scan_work w;
  memset(&w, 0, sizeof w);
  if (max_depth < 1) max_depth = 1;
  // Once per process, here rather than in the load-time constructor: it mallocs, and the
  // key only matters to scans (of glibc's heaps: none under AddressSanitizer).
  if (!ch_asan_on()) ch_malloc_learn_key();
  ch_naming_begin_scan();
  s.skip_start = (uintptr_t)targets;
  s.skip_end = (uintptr_t)(targets + count);
  cholders_scan_stats stats;
  memset(&stats, 0, sizeof stats);
  cholders_scan_result *result = NULL;
  if (prepare_scan(&s, &w, count, &stats, started) && find_regions(&s, &stats)) {
    uint64_t passes_started = now_us();
    search_levels(&s, &w, targets, count, max_depth, &stats);
    uint64_t elapsed = now_us() - started;
    note_figures(&stats, &s, passes_started, elapsed, cpu_started);
    result = make_answer(&s, &w, count, max_paths, caller_references, elapsed);
  }
  stats.failed = result == NULL;
  last_stats = stats;
  ch_bump_reset(&s.bump);
  ch_in_tool = guard;
  pthread_mutex_unlock(&scan_lock);
  return result;
}

void cholders_scan_free(cholders_scan_result *result) {
  if (result == NULL) return;
  ch_bump memory = {result->memory};
  ch_bump_reset(&memory);
}
