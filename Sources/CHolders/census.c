// The whole-process leak census: which live Swift objects the program can no longer reach,
// grouped as Apple's `leaks` groups them (ROOT CYCLE, ROOT LEAK).
//
// The method is CPython's cycle collector's, confirmed by a root scan:
// 1. copy every registered object's strong count (the registry's snapshot; the header is
//    read from memory and re-validated: metadata an allocation used, not deiniting);
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
// Memory: the snapshot's rows, plus per object a flag byte, a 32-bit count and a 32-bit
// edge offset, plus 4 bytes per owning reference; everything in tool memory (never a root).
// The other threads are parked while memory is read (census_threads.c), so no reference
// moves between what was read and what was not.
#define _GNU_SOURCE

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "census.h"

#define SPARE_BITS_STRIPPED 0x00fffffffffffff8ull  // SWIFT_ABI_DEFAULT_64BIT_SPARE_BITS_MASK
#define WINDOW_BYTES (1u << 20)
#define FILTER_BITS (1u << 24)
#define TYPE_SLOTS (1u << 16)
#define STALE_WORDS 64

static pthread_mutex_t census_lock = PTHREAD_MUTEX_INITIALIZER;
static cholders_census_stats last_stats;
static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;

// A fork waits for a census under way (prepare takes its lock; a forking thread the census
// parked runs on once it is let go), so the child never inherits a census half done: its
// lock is free and no thread of its own is parked.
static void census_before_fork(void) { pthread_mutex_lock(&census_lock); }
static void census_after_fork(void) { pthread_mutex_unlock(&census_lock); }
static void install_fork_handlers(void) {
  pthread_atfork(census_before_fork, census_after_fork, census_after_fork);
}

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

// ---- edges --------------------------------------------------------------------------------

/// Edges are stored as the target's row when the metadata vouches for the word as a
/// reference (a declared field's first word, a closure capture, an element of an array of
/// class references): subtracted from the target's count. A word that may only look like
/// one (inside a struct or enum payload, where a case's unused bytes keep an old value, or
/// in tail-allocated storage) is stored as -(row + 2): followed when marking and grouping,
/// never subtracted, so a stale copy cannot make a held object look like garbage.
#define EDGE_DROPPED (-1)
static inline int32_t edge_target(int32_t e) {
  return e >= 0 ? e : e == EDGE_DROPPED ? -1 : -e - 2;
}

// ---- what each type's words mean ---------------------------------------------------------

enum { WORDS_OWNING = 0, WORDS_CLASS = 1, WORDS_ARRAY = 2 };

/// Per metadata: which words own what they point at. Filled once per type, before threads
/// are parked where possible (it asks the runtime for names, which takes its locks).
typedef struct {
  uintptr_t metadata;
  uint8_t kind;
  uint64_t stale;  // WORDS_CLASS: bit i set when the word at 16 + 8 i owns nothing
  uint32_t field_words;  // WORDS_CLASS: words of stored properties (past them: tail storage)
  uint32_t element_start, element_stride;  // WORDS_ARRAY
  int certain_elements;  // WORDS_ARRAY: elements are class references
} word_rule;

typedef struct {
  word_rule *slots;
  uintptr_t array_descriptor;
} rules;

static word_rule *rule_slot(rules *r, uintptr_t metadata) {
  uint32_t slot = (uint32_t)(((metadata >> 3) * 0x9E3779B97F4A7C15ull) >> 48);
  for (uint32_t probes = 0; probes < TYPE_SLOTS; probes++) {
    word_rule *rule = &r->slots[slot];
    if (rule->metadata == metadata || rule->metadata == 0) return rule;
    slot = (slot + 1) & (TYPE_SLOTS - 1);
  }
  return NULL;
}

static const word_rule *rule_of(rules *r, uintptr_t metadata) {
  static const word_rule owning = {0, WORDS_OWNING, 0, 0, 0, 0, 0};
  word_rule *rule = rule_slot(r, metadata);
  if (rule == NULL) return &owning;
  if (rule->metadata == metadata) return rule;
  rule->metadata = metadata;
  rule->kind = WORDS_OWNING;
  uintptr_t kind = *(const uintptr_t *)metadata;
  if (kind != 0 && kind <= 0x7ff) return rule;  // closure contexts, boxes: all captures own
  uintptr_t description = *(const uintptr_t *)(metadata + 40);
  uint64_t header[4] = {metadata, 0, (uint64_t)1 << 40, 0};
  ch_name name;
  if (r->array_descriptor && description == r->array_descriptor) {
    // The element layout, from what naming.c says of each word of a huge array.
    rule->kind = WORDS_ARRAY;
    rule->element_start = 32;
    rule->element_stride = 8;
    int start_found = 0;
    for (uint32_t offset = 16; offset < 16 + 8 * STALE_WORDS; offset += 8) {
      ch_describe(metadata, header, offset, &name);
      if (name.edge != CH_EDGE_ELEMENT) continue;
      if (!start_found && name.element == 0) {
        rule->element_start = offset;
        start_found = 1;
      } else if (start_found && name.element == 1) {
        rule->element_stride = offset - rule->element_start;
        break;
      }
    }
    rule->certain_elements =
        rule->element_stride == 8 && ch_census_array_of_references(metadata);
    return rule;
  }
  uint32_t instance_size;
  memcpy(&instance_size, (const void *)(metadata + 24), 4);
  rule->kind = WORDS_CLASS;
  for (uint32_t i = 0; i < STALE_WORDS && 16 + 8 * i < instance_size; i++) {
    ch_describe(metadata, header, 16 + 8 * i, &name);
    if (name.edge == CH_EDGE_STALE) rule->stale |= 1ull << i;
    rule->field_words = i + 1;
  }
  rule->stale |= ch_census_plain_fields(metadata, STALE_WORDS);
  return rule;
}

enum { WORD_NONE = 0, WORD_CERTAIN = 1, WORD_MAYBE = 2 };

/// What the word at `offset` of an object (its first words in `header`) is: no reference, a
/// reference the metadata vouches for, or a word that may be one (see edge_target).
static int owns(const word_rule *rule, const uint64_t *header, uint64_t offset) {
  if (rule->kind == WORDS_CLASS) {
    uint64_t i = (offset - 16) / 8;
    if (i >= STALE_WORDS) return WORD_MAYBE;
    if ((rule->stale >> i) & 1) return WORD_NONE;
    return i < rule->field_words ? WORD_CERTAIN : WORD_MAYBE;
  }
  if (rule->kind == WORDS_ARRAY) {
    if (offset < rule->element_start) return WORD_NONE;  // count and capacity
    int64_t count = (int64_t)header[2];
    uint64_t index = (offset - rule->element_start) / rule->element_stride;
    if (count < 0 || index >= (uint64_t)count) return WORD_NONE;
    return rule->certain_elements ? WORD_CERTAIN : WORD_MAYBE;
  }
  return WORD_CERTAIN;
}

// ---- rows --------------------------------------------------------------------------------

typedef struct {
  ch_census *c;
  uint64_t *filter;
  uintptr_t low, high;
} finder;

static size_t rows_at_or_below(const ch_census *c, uintptr_t address) {
  size_t low = 0, high = c->row_count;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    if (c->rows[middle].address <= address) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

/// The row of the object starting exactly at `key`, or -1.
static inline int32_t exact(const finder *f, uintptr_t key) {
  if (key < f->low || key > f->high || (key & 15)) return -1;
  uint64_t bit = (key >> 4) & (FILTER_BITS - 1);
  if (!(f->filter[bit >> 6] & (1ull << (bit & 63)))) return -1;
  size_t count = rows_at_or_below(f->c, key);
  return count > 0 && f->c->rows[count - 1].address == key ? (int32_t)(count - 1) : -1;
}

/// The valid row whose object encloses `address`, or -1. The chunk's last word is left out:
/// it is the next chunk's `prev_size`, and the address right after a chunk is what glibc's
/// arena keeps as its `top` (or a free chunk's address in a bin): no reference to this one.
static int32_t enclosing(const ch_census *c, uintptr_t address) {
  size_t count = rows_at_or_below(c, address);
  if (count == 0) return -1;
  const ch_entry *row = &c->rows[count - 1];
  if (!(c->flags[count - 1] & CF_VALID)) return -1;
  return address < row->address + row->size - 8 ? (int32_t)(count - 1) : -1;
}

/// Validates a row from its first two words and the chunk size word before it; fills in
/// metadata and size; returns its strong count (-1 unknown) or -2 when it is no live object.
static int64_t adopt(ch_entry *row, const uint64_t *header, uint64_t chunk_size_word) {
  uint64_t bits = header[1];
  if (!CH_RC_SLOW(bits) && (bits & CH_RC_DEINITING)) return -2;
  if (!ch_metadata_known(header[0])) return -2;
  // glibc: the size in the bits above 3; bit 1 marks an mmap'ed chunk (two header words).
  uint64_t chunk_size = chunk_size_word & ~(uint64_t)7;
  uint64_t overhead = (chunk_size_word & 2) ? 16 : 8;
  if (chunk_size < 32 || chunk_size - overhead > ((uint64_t)1 << 40)) return -2;
  row->metadata = header[0];
  row->size = chunk_size - overhead;
  if (!CH_RC_SLOW(bits)) return (int64_t)CH_RC_STRONG_EXTRA(bits) + 1;
  return ch_strong_count(row->address);  // a side table, or immortal (-1)
}

// ---- reading objects ---------------------------------------------------------------------

typedef struct {
  uint64_t *buffer;  // WINDOW_BYTES
  uintptr_t start, end;  // what `buffer` holds
  uint64_t *large;  // for objects larger than the window
  size_t large_bytes;
  ch_bump *bump;
} window;

/// The words [address, address + length), from the window (refilled as needed) or a
/// separate read for large objects; NULL when unreadable. `length` is shortened to what
/// could be read.
static const uint64_t *read_words(window *w, uintptr_t address, size_t *length) {
  if (address >= w->start && address + *length <= w->end) {
    return &w->buffer[(address - w->start) / 8];
  }
  if (*length + 8 <= WINDOW_BYTES) {
    size_t got = ch_read(w->buffer, address - 8, WINDOW_BYTES) & ~(size_t)7;
    if (got < 8 + 16) {
      // The window reaches past the mapping's end: read the object alone.
      got = ch_read(w->buffer, address - 8, *length + 8) & ~(size_t)7;
      if (got < 8 + 16) return NULL;
    }
    w->start = address - 8;
    w->end = address - 8 + got;
    if (address + *length > w->end) *length = w->end - address;
    return &w->buffer[1];
  }
  if (w->large_bytes < *length + 8) {
    w->large_bytes = (*length + 8 + 4095) & ~(size_t)4095;
    w->large = ch_bump_alloc(w->bump, w->large_bytes);
    if (w->large == NULL) return NULL;
  }
  size_t got = ch_read(w->large, address - 8, *length + 8) & ~(size_t)7;
  if (got < 8 + 16) return NULL;
  *length = got - 8;
  return &w->large[1];
}

// ---- the passes --------------------------------------------------------------------------

/// Pass 1: validates every row and collects its owning words that point at rows.
static int object_pass(ch_census *c, finder *f, rules *r, window *w, size_t edge_capacity) {
  size_t edges = 0;
  for (size_t i = 0; i < c->row_count; i++) {
    c->edge_start[i] = (uint32_t)edges;
    ch_entry *row = &c->rows[i];
    size_t length = 16;
    const uint64_t *words = read_words(w, row->address, &length);
    if (words == NULL || length < 16) continue;
    int64_t strong = adopt(row, words, words[-1]);
    if (strong == -2) continue;
    c->flags[i] |= CF_VALID;
    if (strong < 0) {
      c->flags[i] |= CF_RC_UNKNOWN;
      strong = 0;
    }
    c->refs[i] = strong > INT32_MAX ? INT32_MAX : (int32_t)strong;
    c->live_bytes += row->size;
    length = row->size;
    words = read_words(w, row->address, &length);
    if (words == NULL) continue;
    const word_rule *rule = rule_of(r, row->metadata);
    for (size_t k = 2; k < length / 8; k++) {
      uintptr_t key = words[k] & SPARE_BITS_STRIPPED;
      int32_t target = exact(f, key);
      if (target < 0) continue;
      int kind = owns(rule, words, k * 8);
      if (kind == WORD_NONE) continue;
      if (edges == edge_capacity) return 0;
      c->edges[edges++] = kind == WORD_CERTAIN ? target : -target - 2;
    }
  }
  c->edge_start[c->row_count] = (uint32_t)edges;
  c->edge_count = edges;
  return 1;
}

/// Subtracts the references between valid objects; drops edges into invalid rows.
static void subtract_internal(ch_census *c) {
  for (size_t i = 0; i < c->row_count; i++) {
    if (!(c->flags[i] & CF_VALID)) continue;
    for (uint32_t e = c->edge_start[i]; e < c->edge_start[i + 1]; e++) {
      int32_t t = edge_target(c->edges[e]);
      if (!(c->flags[t] & CF_VALID)) {
        c->edges[e] = EDGE_DROPPED;
        continue;
      }
      if (c->edges[e] >= 0) c->refs[t]--;
    }
  }
}

typedef struct {
  uintptr_t start;
  int ok;
  uintptr_t *ranges;
  size_t count;
} free_walk;

#define MAX_FREE_WALKS 64

/// Whether heap word `address` lies in a free malloc chunk (heap.c), walked once per heap.
static int in_free_chunk(ch_census *c, free_walk *walks, size_t *walk_count,
                         const ch_region *region, uintptr_t address) {
  if (region->kind != CH_REGION_HEAP || region->arena == 0) return 0;
  free_walk *walk = NULL;
  for (size_t i = 0; i < *walk_count && !walk; i++) {
    if (walks[i].start == region->arena_start) walk = &walks[i];
  }
  if (walk == NULL) {
    if (*walk_count == MAX_FREE_WALKS) return 0;
    walk = &walks[(*walk_count)++];
    walk->start = region->arena_start;
    walk->ok = ch_malloc_free_ranges(&c->bump, region->arena_start, region->arena_end,
                                     region->arena == 1, &walk->ranges, &walk->count);
  }
  return walk->ok && ch_malloc_is_free(walk->ranges, walk->count, address);
}

/// Pass 2: every root word that points into a valid object flags it CF_ROOT_WORD. Words
/// inside valid objects are references, not roots; words in free chunks are stale; a side
/// table's pointer back at its object owns nothing.
static void root_pass(ch_census *c, const ch_region *regions, size_t region_count,
                      uint64_t *buffer, uintptr_t own_frame) {
  free_walk walks[MAX_FREE_WALKS];
  size_t walk_count = 0;
  uintptr_t low = c->row_count ? c->rows[0].address : 1;
  uintptr_t high = c->row_count ? c->rows[c->row_count - 1].address + c->rows[c->row_count - 1].size : 0;
  for (size_t r = 0; r < region_count; r++) {
    const ch_region *region = &regions[r];
    uintptr_t start = region->start;
    // The census's own frames hold nothing of the program's.
    if (own_frame > start && own_frame < region->end) {
      start = own_frame;
    }
    size_t next_row = rows_at_or_below(c, start);
    next_row = next_row > 0 ? next_row - 1 : 0;
    for (uintptr_t at = start; at < region->end;) {
      size_t want = region->end - at < WINDOW_BYTES ? region->end - at : WINDOW_BYTES;
      size_t got = ch_read(buffer, at, want) & ~(size_t)7;
      if (got == 0) {
        at += 4096;
        continue;
      }
      for (size_t i = 0; i < got / 8; i++) {
        uintptr_t key = buffer[i] & SPARE_BITS_STRIPPED;
        if (key < low || key >= high) continue;
        uintptr_t address = at + i * 8;
        if (region->kind == CH_REGION_HEAP) {
          // Skip the words of valid objects: rows ahead of `address` in order.
          while (next_row < c->row_count &&
                 c->rows[next_row].address + (c->rows[next_row].size ? c->rows[next_row].size : 16) <= address) {
            next_row++;
          }
          if (next_row < c->row_count && (c->flags[next_row] & CF_VALID) &&
              c->rows[next_row].address <= address) {
            continue;
          }
        }
        int32_t target = enclosing(c, key);
        if (target < 0) continue;
        if (c->flags[target] & CF_ROOT_WORD) continue;
        if (region->kind == CH_REGION_HEAP) {
          uint64_t bits = 0;
          ch_read(&bits, c->rows[target].address + 8, 8);
          if (ch_is_side_table_word(bits, address)) continue;
          if (in_free_chunk(c, walks, &walk_count, region, address)) continue;
        }
        c->flags[target] |= CF_ROOT_WORD;
      }
      at += got;
    }
  }
}

/// Marks from `stack[0..count)` through owning edges, setting `flag`; rows with `barrier`
/// are neither marked nor followed.
///
/// A word that may only look like a reference (edge_target) is followed only into an
/// object whose count is not made up by the references vouched for: a legitimate reference
/// inside a struct is then part of that count, while a stale copy (an enum case's unused
/// payload bytes hold whatever the stack had, and the recorder's event buffer copies such
/// values) cannot keep a garbage cycle, whose count its own references make up.
static void mark(ch_census *c, int32_t *stack, size_t count, uint8_t flag, uint8_t barrier) {
  while (count > 0) {
    int32_t x = stack[--count];
    for (uint32_t e = c->edge_start[x]; e < c->edge_start[x + 1]; e++) {
      int32_t t = edge_target(c->edges[e]);
      if (t < 0 || (c->flags[t] & (CF_MARKED | CF_DELAYED | barrier))) continue;
      if (c->edges[e] < 0 && c->refs[t] <= 0 && !(c->flags[t] & CF_RC_UNKNOWN)) continue;
      c->flags[t] |= flag;
      stack[count++] = t;
    }
  }
}

// ---- grouping ----------------------------------------------------------------------------
//
// Only the unreachable objects take part, renumbered densely (`unit` numbers): the arrays
// below are sized by how many there are, not by the heap, so a census of a large heap with
// few leaks costs no more memory than its marks.

typedef struct {
  ch_census *c;
  const int32_t *unit_of;  // per row: its unit, or -1 (reachable or not an object)
  int32_t *row_of;  // per unit
  int32_t count;
} units;

/// The unit an edge leads to, or -1 when it leads to no unreachable object.
static inline int32_t unit_target(const units *u, uint32_t e) {
  int32_t t = edge_target(u->c->edges[e]);
  return t < 0 ? -1 : u->unit_of[t];
}

static inline uint32_t first_edge(const units *u, int32_t unit) {
  return u->c->edge_start[u->row_of[unit]];
}

static inline uint32_t end_edge(const units *u, int32_t unit) {
  return u->c->edge_start[u->row_of[unit] + 1];
}

/// Tarjan's strongly connected components, iteratively. `component[unit]` receives a
/// component number; returns how many.
static int32_t components(const units *u, int32_t *component, int32_t *index, int32_t *low,
                          int32_t *stack, int32_t *call_unit, uint32_t *call_edge,
                          uint8_t *on_stack) {
  int32_t next_index = 0, count = 0;
  size_t depth = 0, top = 0;
  for (int32_t i = 0; i < u->count; i++) index[i] = -1;
  for (int32_t start = 0; start < u->count; start++) {
    if (index[start] >= 0) continue;
    call_unit[0] = start;
    call_edge[0] = first_edge(u, start);
    index[start] = low[start] = next_index++;
    stack[top++] = start;
    on_stack[start] = 1;
    depth = 1;
    while (depth > 0) {
      int32_t v = call_unit[depth - 1];
      uint32_t *e = &call_edge[depth - 1];
      int descended = 0;
      while (*e < end_edge(u, v)) {
        int32_t w = unit_target(u, (*e)++);
        if (w < 0) continue;
        if (index[w] < 0) {
          index[w] = low[w] = next_index++;
          stack[top++] = w;
          on_stack[w] = 1;
          call_unit[depth] = w;
          call_edge[depth] = first_edge(u, w);
          depth++;
          descended = 1;
          break;
        }
        if (on_stack[w] && index[w] < low[v]) low[v] = index[w];
      }
      if (descended) continue;
      if (low[v] == index[v]) {
        int32_t w;
        do {
          w = stack[--top];
          on_stack[w] = 0;
          component[w] = count;
        } while (w != v);
        count++;
      }
      depth--;
      if (depth > 0) {
        int32_t parent = call_unit[depth - 1];
        if (low[v] < low[parent]) low[parent] = low[v];
      }
    }
  }
  return count;
}

/// The shortest cycle through the group's root inside its component, by breadth-first
/// search (`via` all -1 on entry and on return).
static void find_cycle(const units *u, ch_group *g, int32_t root, const int32_t *component,
                       int32_t *queue, int32_t *via) {
  int32_t comp = component[root];
  size_t head = 0, tail = 0;
  queue[tail++] = root;
  via[root] = -2;
  int32_t closing = -1;
  while (head < tail && closing < 0) {
    int32_t x = queue[head++];
    for (uint32_t e = first_edge(u, x); e < end_edge(u, x); e++) {
      int32_t t = unit_target(u, e);
      if (t < 0 || component[t] != comp) continue;
      if (t == root) {
        closing = x;
        break;
      }
      if (via[t] != -1) continue;
      via[t] = x;
      queue[tail++] = t;
    }
  }
  // Walk back from the unit that closes the cycle, then reverse.
  int32_t path[CH_CYCLE_EDGES];
  size_t n = 0;
  for (int32_t x = closing; x >= 0 && n < CH_CYCLE_EDGES; x = via[x] == -2 ? -1 : via[x]) {
    path[n++] = x;
  }
  for (size_t i = 0; i < tail; i++) via[queue[i]] = -1;
  g->cycle_length = n;
  for (size_t i = 0; i < n; i++) {
    g->cycle_rows[i] = u->row_of[path[n - 1 - i]];
    int32_t to = i + 1 < n ? u->row_of[path[n - 2 - i]] : u->row_of[root];
    g->cycle_offsets[i] = ch_census_edge_offset(u->c, g->cycle_rows[i], to);
  }
}

/// The group's tree: depth first from the root over edges into the group's objects, with
/// an edge back into the cycle as a CYCLE BACK TO line; retained sizes bottom-up.
static void build_tree(const units *u, ch_group *g, int32_t root, const int32_t *group_of,
                       int32_t group, uint8_t *shown, int32_t *shown_list, size_t *shown_count) {
  ch_census *c = u->c;
  typedef struct {
    int32_t line;
    uint32_t edge;
  } frame;
  frame frames[CH_TREE_LINES];
  int32_t line_unit[CH_TREE_LINES];
  size_t depth = 0;
  g->tree[0] = (ch_tree_line){g->root, -1, 0, 0, 0, 1, c->rows[g->root].size};
  line_unit[0] = root;
  g->tree_count = 1;
  shown[root] = 1;
  shown_list[(*shown_count)++] = root;
  frames[depth++] = (frame){0, first_edge(u, root)};
  while (depth > 0) {
    frame *f = &frames[depth - 1];
    int32_t x = line_unit[f->line];
    int descended = 0;
    while (f->edge < end_edge(u, x) && g->tree_count < CH_TREE_LINES) {
      uint32_t e = f->edge++;
      int32_t t = unit_target(u, e);
      if (t < 0 || group_of[t] != group) continue;
      int32_t row = u->row_of[t];
      ch_tree_line line = {row, f->line, g->tree[f->line].depth + 1, 0,
                           ch_census_edge_offset(c, u->row_of[x], row), 1, c->rows[row].size};
      if (shown[t]) {
        // Only edges back into the cycle are worth a line; a second path to a subtree
        // object would repeat it.
        int in_cycle = 0;
        for (size_t k = 0; k < g->cycle_length; k++) in_cycle |= g->cycle_rows[k] == row;
        if (!in_cycle && t != root) continue;
        line.back = 1;
        line.retained_count = 0;
        line.retained_bytes = 0;
        line_unit[g->tree_count] = t;
        g->tree[g->tree_count++] = line;
        continue;
      }
      shown[t] = 1;
      shown_list[(*shown_count)++] = t;
      line_unit[g->tree_count] = t;
      g->tree[g->tree_count++] = line;
      if (depth < CH_TREE_LINES) {
        frames[depth++] = (frame){(int32_t)g->tree_count - 1, first_edge(u, t)};
        descended = 1;
        break;
      }
    }
    if (!descended) depth--;
  }
  for (size_t i = g->tree_count; i-- > 1;) {
    ch_tree_line *line = &g->tree[i];
    if (line->back) continue;
    g->tree[line->parent].retained_count += line->retained_count;
    g->tree[line->parent].retained_bytes += line->retained_bytes;
  }
}

static void add_type(ch_group *g, uintptr_t metadata, uint64_t bytes) {
  for (size_t i = 0; i < g->type_count; i++) {
    if (g->types[i].metadata == metadata) {
      g->types[i].count++;
      g->types[i].bytes += bytes;
      return;
    }
  }
  if (g->type_count < CH_GROUP_TYPES) {
    g->types[g->type_count++] = (ch_type_count){metadata, 1, bytes};
  } else {
    g->other_count++;
    g->other_bytes += bytes;
  }
}

static uint64_t hash_bytes(uint64_t hash, const char *bytes, size_t length) {
  for (size_t i = 0; i < length; i++) {
    hash ^= (unsigned char)bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

/// Library modules: a group whose every named type comes from one of these (or is a test
/// case XCTest made, xctest_case) is the toolchain's leak, not the program's (issue 36). A
/// program object that such a leak keeps makes the whole group the program's, shown with the
/// library's cycle as its holder.
static int library_module(const char *name, size_t length) {
  static const char *const modules[] = {
      "Swift",       "Foundation", "FoundationEssentials", "FoundationInternationalization",
      "Dispatch",    "XCTest",     "Testing",              "_Concurrency",
      "CoreFoundation", "_StringProcessing", "Synchronization", "_Testing_Foundation",
  };
  const char *dot = memchr(name, '.', length);
  if (dot == NULL) return -1;  // no module ("closure context", "box"): says nothing
  size_t module_length = (size_t)(dot - name);
  for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
    if (strlen(modules[i]) == module_length && memcmp(modules[i], name, module_length) == 0) {
      return 1;
    }
  }
  return 0;
}

/// Whether the class with `metadata` inherits from XCTest's XCTestCase: XCTest makes, runs
/// and keeps those instances (on Linux it keeps every test case in a cycle with its run), so
/// a test case is the library's object even though its class is the program's.
static int xctest_case(uintptr_t metadata) {
  uintptr_t m = metadata;
  for (int depth = 0; m && depth < 32; depth++) {
    uintptr_t kind = *(const uintptr_t *)m;
    if (kind != 0 && kind <= 0x7ff) return 0;  // not a class
    size_t length;
    const char *name = ch_type_name(m, &length);
    if (length == 17 && memcmp(name, "XCTest.XCTestCase", 17) == 0) return 1;
    m = *(const uintptr_t *)(m + 8);
  }
  return 0;
}

static int compare_types(const void *a, const void *b) {
  const ch_type_count *x = a, *y = b;
  size_t xl, yl;
  const char *xn = ch_census_type_name(x->metadata, &xl);
  const char *yn = ch_census_type_name(y->metadata, &yl);
  int order = memcmp(xn, yn, xl < yl ? xl : yl);
  if (order != 0) return order;
  return xl < yl ? -1 : xl > yl;
}

/// The finding id's hash: the group's kind, its types with their counts (sorted by name),
/// and its cycle's types and fields.
static void finish_group(ch_census *c, ch_group *g) {
  qsort(g->types, g->type_count, sizeof g->types[0], compare_types);
  uint64_t hash = 0xcbf29ce484222325ull;
  hash = hash_bytes(hash, g->cycle ? "cycle" : "leak", g->cycle ? 5 : 4);
  int library = -1;
  for (size_t i = 0; i < g->type_count; i++) {
    size_t length;
    const char *name = ch_census_type_name(g->types[i].metadata, &length);
    hash = hash_bytes(hash, name, length);
    char count[24];
    int n = snprintf(count, sizeof count, "#%llu;", (unsigned long long)g->types[i].count);
    hash = hash_bytes(hash, count, (size_t)n);
    int from_library = library_module(name, length);
    if (from_library == 0 && xctest_case(g->types[i].metadata)) from_library = 1;
    if (from_library == 0) library = 0;
    if (from_library == 1 && library == -1) library = 1;
  }
  if (g->other_count > 0) library = 0;
  g->library = library == 1;
  // A field is its offset within its type (the same in every instance of one build), so
  // the offsets stand for the field names without reading the objects again.
  for (size_t i = 0; i < g->cycle_length; i++) {
    size_t length;
    const char *name = ch_census_type_name(c->rows[g->cycle_rows[i]].metadata, &length);
    hash = hash_bytes(hash, name, length);
    char field[24];
    int n = snprintf(field, sizeof field, "+%u>", g->cycle_offsets[i]);
    hash = hash_bytes(hash, field, (size_t)n);
  }
  g->hash = hash;
}

/// The unit of the component's member whose type name sorts first (then the lowest
/// address): the same cycle found from another member reads the same.
static int32_t canonical_root(const units *u, const int32_t *members, uint32_t from,
                              uint32_t to) {
  ch_census *c = u->c;
  int32_t best = members[from];
  size_t best_length;
  const char *best_name = ch_census_type_name(c->rows[u->row_of[best]].metadata, &best_length);
  for (uint32_t i = from + 1; i < to; i++) {
    int32_t m = members[i];
    size_t length;
    const char *name = ch_census_type_name(c->rows[u->row_of[m]].metadata, &length);
    size_t shorter = length < best_length ? length : best_length;
    int order = memcmp(name, best_name, shorter);
    if (order == 0) order = length < best_length ? -1 : length > best_length;
    if (order < 0 ||
        (order == 0 && c->rows[u->row_of[m]].address < c->rows[u->row_of[best]].address)) {
      best = m;
      best_name = name;
      best_length = length;
    }
  }
  return best;
}

/// Groups the unreachable objects (see the file comment). Runs after the threads go on;
/// reuses `refs` (no longer needed once marking is done) as each row's unit.
static int group(ch_census *c) {
  size_t n = c->row_count;
  units u = {c, c->refs, NULL, 0};
  int32_t *unit_of = c->refs;
  for (size_t i = 0; i < n; i++) {
    int unreachable = (c->flags[i] & (CF_VALID | CF_MARKED | CF_DELAYED)) == CF_VALID;
    unit_of[i] = unreachable ? u.count++ : -1;
  }
  size_t m = (size_t)u.count + 1;
  u.row_of = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  int32_t *component = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  int32_t *index = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  int32_t *low = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  int32_t *stack = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  int32_t *call_unit = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  uint32_t *call_edge = ch_bump_alloc(&c->bump, m * sizeof(uint32_t));
  uint8_t *on_stack = ch_bump_alloc(&c->bump, m);
  int32_t *members = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  if (!u.row_of || !component || !index || !low || !stack || !call_unit || !call_edge ||
      !on_stack || !members) {
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    if (unit_of[i] >= 0) u.row_of[unit_of[i]] = (int32_t)i;
  }
  memset(on_stack, 0, m);
  int32_t count = components(&u, component, index, low, stack, call_unit, call_edge, on_stack);
  uint32_t *component_start = ch_bump_alloc(&c->bump, ((size_t)count + 2) * sizeof(uint32_t));
  if (!component_start) return 0;
  // Reuse: index -> referenced (per component), low -> group_of (per unit), on_stack ->
  // self edge (per component), call_unit -> sizes then the shown list.
  int32_t *referenced = index, *group_of = low, *size = call_unit;
  uint8_t *self_edge = on_stack;
  for (int32_t k = 0; k < count; k++) {
    referenced[k] = 0;
    self_edge[k] = 0;
    size[k] = 0;
  }
  for (int32_t x = 0; x < u.count; x++) {
    group_of[x] = -1;
    size[component[x]]++;
    for (uint32_t e = first_edge(&u, x); e < end_edge(&u, x); e++) {
      int32_t t = unit_target(&u, e);
      if (t < 0) continue;
      if (component[t] != component[x]) referenced[component[t]] = 1;
      if (t == x) self_edge[component[x]] = 1;
    }
  }
  // Each component's members, contiguous (a counting sort by component).
  component_start[0] = 0;
  for (int32_t k = 0; k < count; k++) {
    component_start[k + 1] = component_start[k] + (uint32_t)size[k];
    size[k] = 0;
  }
  for (int32_t x = 0; x < u.count; x++) {
    int32_t k = component[x];
    members[component_start[k] + (uint32_t)size[k]++] = x;
  }
  c->group_capacity = 0;
  for (int32_t k = 0; k < count; k++) c->group_capacity += !referenced[k];
  c->groups = ch_bump_alloc(&c->bump, (c->group_capacity + 1) * sizeof(ch_group));
  int32_t *roots = ch_bump_alloc(&c->bump, (c->group_capacity + 1) * sizeof(int32_t));
  if (c->groups == NULL || roots == NULL) return 0;
  int32_t *queue = stack;
  int32_t *via = (int32_t *)call_edge;
  for (int32_t x = 0; x < u.count; x++) via[x] = -1;
  // Roots in address order (the order the heap allocated them, roughly).
  for (int32_t x = 0; x < u.count; x++) {
    int32_t k = component[x];
    if (referenced[k] || group_of[x] >= 0) continue;
    int32_t id = (int32_t)c->group_count++;
    ch_group *g = &c->groups[id];
    memset(g, 0, sizeof *g);
    uint32_t from = component_start[k], to = component_start[k + 1];
    g->cycle = to - from > 1 || self_edge[k];
    roots[id] = g->cycle ? canonical_root(&u, members, from, to) : x;
    g->root = u.row_of[roots[id]];
    g->same_as = -1;
    // Breadth first from the component: every unassigned unreachable object it reaches.
    size_t head = 0, tail = 0;
    for (uint32_t i = from; i < to; i++) {
      group_of[members[i]] = id;
      queue[tail++] = members[i];
    }
    while (head < tail) {
      int32_t y = queue[head++];
      for (uint32_t e = first_edge(&u, y); e < end_edge(&u, y); e++) {
        int32_t t = unit_target(&u, e);
        if (t < 0 || group_of[t] >= 0) continue;
        group_of[t] = id;
        queue[tail++] = t;
      }
    }
    for (size_t i = 0; i < tail; i++) {
      const ch_entry *row = &c->rows[u.row_of[queue[i]]];
      g->count++;
      g->bytes += row->size;
      add_type(g, row->metadata, row->size);
    }
    c->unreachable += g->count;
    c->unreachable_bytes += g->bytes;
  }
  for (size_t id = 0; id < c->group_count; id++) {
    ch_group *g = &c->groups[id];
    if (g->cycle) find_cycle(&u, g, roots[id], component, queue, via);
    finish_group(c, g);
  }
  // Same shape, same finding: the first group of each id counts the others (a table of
  // first groups by hash, open addressing).
  size_t slots = 16;
  while (slots < c->group_count * 2) slots *= 2;
  int32_t *first = ch_bump_alloc(&c->bump, slots * sizeof(int32_t));
  if (first == NULL) return 0;
  memset(first, 0xff, slots * sizeof(int32_t));
  for (size_t id = 0; id < c->group_count; id++) {
    ch_group *g = &c->groups[id];
    g->instances = 1;
    size_t slot = (size_t)(g->hash * 0x9E3779B97F4A7C15ull >> 20) & (slots - 1);
    while (first[slot] >= 0 && c->groups[first[slot]].hash != g->hash) {
      slot = (slot + 1) & (slots - 1);
    }
    if (first[slot] < 0) {
      first[slot] = (int32_t)id;
    } else {
      g->same_as = first[slot];
      c->groups[first[slot]].instances++;
    }
  }
  // Trees for the first group of each finding (the only ones written), with `index` as the
  // "shown" marks and `call_unit` as their list.
  uint8_t *shown = (uint8_t *)index;
  int32_t *shown_list = call_unit;
  memset(shown, 0, m);
  for (size_t id = 0; id < c->group_count; id++) {
    ch_group *g = &c->groups[id];
    if (g->same_as >= 0) continue;
    size_t shown_count = 0;
    build_tree(&u, g, roots[id], group_of, (int32_t)id, shown, shown_list, &shown_count);
    for (size_t k = 0; k < shown_count; k++) shown[shown_list[k]] = 0;
  }
  return 1;
}

// ---- names -------------------------------------------------------------------------------

/// Names asked for by metadata, cached: a census of many groups asks for the same few
/// types again and again, and the runtime's lookup takes its lock each time. Names are the
/// runtime's, never freed; the table is used under the census lock only.
static const char *census_type_name(uintptr_t metadata, size_t *length);
#define NAME_CACHE 4096
static struct {
  uintptr_t metadata;
  const char *name;
  size_t length;
} name_cache[NAME_CACHE];

const char *ch_census_type_name(uintptr_t metadata, size_t *length) {
  size_t slot = (size_t)((metadata >> 3) * 0x9E3779B97F4A7C15ull >> 52) & (NAME_CACHE - 1);
  if (name_cache[slot].metadata == metadata) {
    *length = name_cache[slot].length;
    return name_cache[slot].name;
  }
  const char *name = census_type_name(metadata, length);
  name_cache[slot].metadata = metadata;
  name_cache[slot].name = name;
  name_cache[slot].length = *length;
  return name;
}

static const char *census_type_name(uintptr_t metadata, size_t *length) {
  uintptr_t kind = *(const uintptr_t *)metadata;
  if (kind == 0x400 || kind == 0x500) {
    // Named by what it captures, so that contexts of different closures stay apart in the
    // per-type counts: "closure context (Shop.Cart, Swift.String)". Kept for the process's
    // life, once per context type (the name cache's slot may forget it; then it is made
    // again, a few bytes more).
    uint64_t header[4] = {metadata, 0, 0, 0};
    ch_name name;
    ch_describe(metadata, header, 16, &name);
    char text[512];
    size_t used = (size_t)snprintf(text, sizeof text, "%s (", kind == 0x400 ? "closure context" : "box");
    for (int i = 0; i < name.capture_count && used < sizeof text - 8; i++) {
      size_t room = sizeof text - 8 - used;
      size_t n = name.capture_lengths[i] < room ? name.capture_lengths[i] : room;
      if (i) {
        memcpy(text + used, ", ", 2);
        used += 2;
      }
      memcpy(text + used, name.captures[i], n);
      used += n;
    }
    if (name.capture_count == 0) {
      *length = kind == 0x400 ? 15 : 3;
      return kind == 0x400 ? "closure context" : "box";
    }
    text[used++] = ')';
    char *kept = malloc(used + 1);
    if (kept == NULL) {
      *length = kind == 0x400 ? 15 : 3;
      return kind == 0x400 ? "closure context" : "box";
    }
    memcpy(kept, text, used);
    kept[used] = 0;
    *length = used;
    return kept;
  }
  if (kind != 0 && kind <= 0x7ff) {
    *length = 11;
    return "heap object";
  }
  return ch_type_name(metadata, length);
}

uint32_t ch_census_edge_offset(ch_census *c, int32_t holder, int32_t target) {
  const ch_entry *row = &c->rows[holder];
  uint64_t words[512];
  uint64_t header[4] = {0, 0, 0, 0};
  uintptr_t wanted = c->rows[target].address;
  // One read from the object's start: its header comes with its first words.
  for (uint64_t at = 0; at < row->size;) {
    size_t chunk = row->size - at < sizeof words ? row->size - at : sizeof words;
    size_t got = ch_read(words, row->address + at, chunk) & ~(size_t)7;
    if (got == 0) break;
    if (at == 0) memcpy(header, words, got < sizeof header ? got : sizeof header);
    for (size_t k = at == 0 ? 2 : 0; k < got / 8; k++) {
      if ((words[k] & SPARE_BITS_STRIPPED) != wanted) continue;
      ch_name name;
      ch_describe(row->metadata, header, at + k * 8, &name);
      if (name.edge != CH_EDGE_STALE) return (uint32_t)(at + k * 8);
    }
    at += got;
  }
  return 0;
}

const char *ch_census_edge_name(ch_census *c, int32_t row, uint32_t offset, char *buffer,
                                size_t capacity) {
  if (offset < 16) return NULL;
  uint64_t header[4] = {0, 0, 0, 0};
  ch_read(header, c->rows[row].address, sizeof header);
  ch_name name;
  ch_describe(c->rows[row].metadata, header, offset, &name);
  if (name.edge == CH_EDGE_FIELD) {
    size_t length = name.field_length < capacity - 1 ? name.field_length : capacity - 1;
    memcpy(buffer, name.field, length);
    buffer[length] = 0;
  } else if (name.edge == CH_EDGE_ELEMENT) {
    snprintf(buffer, capacity, "[%lld]", (long long)name.element);
  } else if (name.edge == CH_EDGE_CAPTURES) {
    snprintf(buffer, capacity, "captured");
  } else {
    snprintf(buffer, capacity, "+%u", offset);
  }
  return buffer;
}

// ---- the entry point ---------------------------------------------------------------------

static char *failure(ch_census *c, const char *why) {
  c->error = why;
  return NULL;
}

/// The census proper, with the lock held; on failure sets c->error and returns NULL.
static char *run(ch_census *c, char **text) {
  uintptr_t frame_marker = (uintptr_t)__builtin_frame_address(0);
  ch_malloc_learn_key();
  rules r = {ch_bump_alloc(&c->bump, TYPE_SLOTS * sizeof(word_rule)),
             (uintptr_t)dlsym(RTLD_DEFAULT, "$ss23_ContiguousArrayStorageCMn")};
  uint64_t *buffer = ch_bump_alloc(&c->bump, WINDOW_BYTES);
  window w = {ch_bump_alloc(&c->bump, WINDOW_BYTES), 0, 0, NULL, 0, &c->bump};
  finder f = {c, ch_bump_alloc(&c->bump, FILTER_BITS / 8), 1, 0};
  if (!r.slots || !buffer || !w.buffer || !f.filter) return failure(c, "out of memory");
  memset(r.slots, 0, TYPE_SLOTS * sizeof(word_rule));
  memset(f.filter, 0, FILTER_BITS / 8);

  // Threads parked from here until memory is read. What runs meanwhile allocates nothing
  // with malloc but the names of types met for the first time (rule_of), and opendir in
  // ch_regions; a parked thread holding such a lock makes that wait, bounded by the park.
  ch_park_threads(&c->park);
  c->row_count = ch_registry_snapshot(&c->bump, &c->rows);
  if (c->rows == NULL) {
    // A snapshot short of registered objects would call the missing ones' referents leaked.
    ch_unpark_threads(&c->park);
    return failure(c, "out of memory for the registry's snapshot");
  }
  size_t n = c->row_count;
  c->flags = ch_bump_alloc(&c->bump, n + 1);
  c->refs = ch_bump_alloc(&c->bump, (n + 1) * sizeof(int32_t));
  c->edge_start = ch_bump_alloc(&c->bump, (n + 1) * sizeof(uint32_t));
  // An object's owning words are at most its words: bounded by the registry's bytes. The
  // mapping is reserved, not touched, beyond what is used.
  size_t edge_capacity = n * 16 + (1u << 16);
  if (edge_capacity > UINT32_MAX) edge_capacity = UINT32_MAX;
  c->edges = ch_bump_alloc(&c->bump, edge_capacity * sizeof(int32_t));
  if (!c->flags || !c->refs || !c->edge_start || !c->edges) {
    ch_unpark_threads(&c->park);
    return failure(c, "out of memory for the census's marks");
  }
  memset(c->flags, 0, n + 1);
  memset(c->refs, 0, (n + 1) * sizeof(int32_t));
  if (n > 0) {
    f.low = c->rows[0].address;
    f.high = c->rows[n - 1].address;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t bit = (c->rows[i].address >> 4) & (FILTER_BITS - 1);
    f.filter[bit >> 6] |= 1ull << (bit & 63);
  }
  ch_region *regions = NULL;
  int regions_incomplete = 0;
  size_t region_count = ch_regions(&c->bump, &regions, 0, &regions_incomplete);
  if (regions_incomplete) {
    // A root left unread would make what only it holds a leak: no census rather than a wrong one.
    ch_unpark_threads(&c->park);
    return failure(c, "could not list every memory region to read for roots");
  }
  if (!object_pass(c, &f, &r, &w, edge_capacity)) {
    ch_unpark_threads(&c->park);
    return failure(c, "too many references between objects for the census's edge table");
  }
  root_pass(c, regions, region_count, buffer, frame_marker);
  ch_unpark_threads(&c->park);

  subtract_internal(c);
  // Pending objects: their rows, flagged as barriers.
  const cholders_census_pending *p = c->pending;
  size_t pending_count = p ? p->count : 0;
  c->pending_rows = ch_bump_alloc(&c->bump, (pending_count + 1) * sizeof(int32_t));
  if (c->pending_rows == NULL) return failure(c, "out of memory");
  for (size_t i = 0; i < pending_count; i++) {
    int32_t row = exact(&f, p->hidden[i] ^ CHOLDERS_CENSUS_HIDE);
    c->pending_rows[i] = row >= 0 && (c->flags[row] & CF_VALID) ? row : -1;
    if (c->pending_rows[i] >= 0) c->flags[row] |= CF_PENDING;
  }
  // Held from outside: a count left over and a root word (or a count that cannot be read).
  int32_t *stack = (int32_t *)ch_bump_alloc(&c->bump, (n + 1) * sizeof(int32_t));
  if (stack == NULL) return failure(c, "out of memory for the census's work stack");
  size_t top = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t flags = c->flags[i];
    if (!(flags & CF_VALID) || (flags & CF_PENDING)) continue;
    int held = (flags & CF_RC_UNKNOWN) || ((flags & CF_ROOT_WORD) && c->refs[i] != 0);
    if (!held) continue;
    c->flags[i] |= CF_MARKED;
    stack[top++] = (int32_t)i;
  }
  mark(c, stack, top, CF_MARKED, CF_PENDING);
  top = 0;
  for (size_t i = 0; i < pending_count; i++) {
    int32_t row = c->pending_rows[i];
    if (row < 0 || (c->flags[row] & (CF_MARKED | CF_DELAYED))) continue;
    c->flags[row] |= CF_DELAYED;
    stack[top++] = row;
  }
  mark(c, stack, top, CF_DELAYED, 0);
  for (size_t i = 0; i < n; i++) c->delayed += (c->flags[i] & CF_DELAYED) != 0;
  if (!group(c)) return failure(c, "out of memory for the census's groups");
  c->total_us = (monotonic_ns() - c->started_ns) / 1000;
  return ch_census_render(c, text);
}

char *cholders_census_json(const cholders_census_pending *pending, const char *label,
                           char **text) {
  if (text) *text = NULL;
  pthread_once(&fork_handlers_once, install_fork_handlers);
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
  // Per live object a flag byte, its count, its first edge and a work-stack slot; per
  // reference 4 bytes; per unreachable object the grouping's nine arrays (37 bytes).
  stats.extra_bytes = c.row_count * (1 + 4 + 4 + 4) + c.edge_count * 4 + c.unreachable * 37;
  last_stats = stats;
  ch_bump_reset(&c.bump);
  ch_in_tool = guard;
  pthread_mutex_unlock(&census_lock);
  return json;
}
