// Reading memory for the census: the object pass (each registered object validated, its
// owning words turned into edges) and the root pass (every root word that points into an
// object), both through ch_read, in windows, while the other threads are parked.
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"

// ---- rows --------------------------------------------------------------------------------

static size_t rows_at_or_below(const ch_census *c, uintptr_t address) {
  return ch_rows_at_or_below(c->rows, address);
}

/// The row of the object starting exactly at `key`, or -1.
static inline int32_t exact(const finder *f, uintptr_t key) {
  return ch_rows_exact(f->c->rows, key);
}

/// The valid row whose object encloses `address`, or -1. The chunk's last word is left out:
/// it is the next chunk's `prev_size`, and the address right after a chunk is what glibc's
/// arena keeps as its `top` (or a free chunk's address in a bin): no reference to this one.
static int32_t enclosing(const ch_census *c, uintptr_t address) {
  size_t count = rows_at_or_below(c, address);
  if (count == 0) return -1;
  int32_t row = (int32_t)(count - 1);
  if (!(c->flags[row] & CF_VALID)) return -1;
  return address < ch_census_address(c, row) + ch_census_size(c, row) - 8 ? row : -1;
}

/// Validates row `i` at `address` from its first two words and the chunk size word before
/// it; records its type and size; returns its strong count (-1 unknown) or -2 when it is no
/// live object.
static int64_t adopt(ch_census *c, rules *r, size_t i, uintptr_t address, const uint64_t *header,
                     uint64_t chunk_size_word) {
  uint64_t bits = header[1];
  if (!CH_RC_SLOW(bits) && (bits & CH_RC_DEINITING)) return -2;
  if (!ch_metadata_known(header[0])) return -2;
  // glibc: the size in the bits above 3; bit 1 marks an mmap'ed chunk (two header words).
  uint64_t chunk_size = chunk_size_word & ~(uint64_t)7;
  uint64_t overhead = (chunk_size_word & 2) ? 16 : 8;
  if (chunk_size < 32 || chunk_size - overhead > ((uint64_t)1 << 40)) return -2;
  const word_rule *rule = ch_census_rule_of(r, header[0]);
  if (rule < r->slots || rule >= r->slots + TYPE_SLOTS) return -3;
  if (overhead == 8 && chunk_size / 16 < CH_SIZE_LARGE) {
    c->size_of[i] = (uint8_t)(chunk_size / 16);
  } else {
    if (c->large_size_count == c->large_size_capacity) return -3;
    c->size_of[i] = CH_SIZE_LARGE;
    c->large_sizes[c->large_size_count++] = (ch_large_size){(uint32_t)i, chunk_size - overhead};
  }
  c->type_of[i] = (uint16_t)(rule - r->slots);
  if (!CH_RC_SLOW(bits)) return (int64_t)CH_RC_STRONG_EXTRA(bits) + 1;
  return ch_strong_count(address);  // a side table, or immortal (-1)
}

uintptr_t ch_census_metadata(const ch_census *c, int32_t row) {
  return (c->flags[row] & CF_VALID) ? c->types[c->type_of[row]].metadata : 0;
}

uint64_t ch_census_size(const ch_census *c, int32_t row) {
  if (!(c->flags[row] & CF_VALID)) return 0;
  uint8_t size = c->size_of[row];
  if (size != CH_SIZE_LARGE) return (uint64_t)size * 16 - 8;
  size_t low = 0, high = c->large_size_count;
  while (low < high) {
    size_t middle = (low + high) / 2;
    if (c->large_sizes[middle].row < (uint32_t)row) low = middle + 1; else high = middle;
  }
  return low < c->large_size_count ? c->large_sizes[low].size : 0;
}

// ---- reading objects ---------------------------------------------------------------------

/// The longest piece of an object read at once: with the chunk's size word before it, it
/// fills the window. A larger object is read in pieces, so the census needs no buffer as
/// large as its largest object (an array of every object of the heap).
#define PIECE_BYTES (WINDOW_BYTES - 8)

/// The words [address, address + length) (length at most PIECE_BYTES), from the window,
/// refilled from `address - 8` as needed (so an object's chunk size word comes with it);
/// NULL when unreadable. `length` is shortened to what could be read.
static const uint64_t *read_words(window *w, uintptr_t address, size_t *length) {
  if (address >= w->start && address + *length <= w->end) {
    return &w->buffer[(address - w->start) / 8];
  }
  size_t got = ch_read(w->buffer, address - 8, WINDOW_BYTES) & ~(size_t)7;
  if (got < 8 + 8) {
    // The window reaches past the mapping's end: read the piece alone.
    got = ch_read(w->buffer, address - 8, *length + 8) & ~(size_t)7;
    if (got < 8 + 8) return NULL;
  }
  w->start = address - 8;
  w->end = address - 8 + got;
  if (address + *length > w->end) *length = w->end - address;
  return &w->buffer[1];
}

// ---- the passes --------------------------------------------------------------------------

/// Appends the edges of one valid object: its words that point at rows and that its type's
/// rule says may own (`header`: its first words, which the rule of an array reads). 0 when
/// the edge table is full.
static int collect_edges(ch_census *c, const finder *f, const word_rule *rule, window *w,
                         uintptr_t address, uint64_t size, const uint64_t *header,
                         size_t *edges, size_t capacity) {
  for (uint64_t at = 0; at < size;) {
    size_t length = size - at < PIECE_BYTES ? (size_t)(size - at) : PIECE_BYTES;
    const uint64_t *words = read_words(w, address + at, &length);
    if (words == NULL || length < 8) return 1;
    for (size_t k = at == 0 ? 2 : 0; k < length / 8; k++) {
      int32_t target = exact(f, words[k] & SPARE_BITS_STRIPPED);
      if (target < 0) continue;
      int kind = owns(rule, header, at + k * 8);
      if (kind == WORD_NONE) continue;
      if (*edges == capacity) return 0;
      c->edges[(*edges)++] = kind == WORD_CERTAIN ? target : -target - 2;
    }
    at += length;
  }
  return 1;
}

/// Validates row `i` at `address` from its header and chunk size word; returns 1 when it is
/// a live object (its count recorded), 0 when it is none, -1 when a table is full; with its
/// first words in `header`.
static int validate_row(ch_census *c, rules *r, window *w, size_t i, uintptr_t address,
                        uint64_t header[4]) {
  size_t length = 32;
  const uint64_t *words = read_words(w, address, &length);
  if (words == NULL || length < 16) return 0;
  memset(header, 0, 4 * sizeof(uint64_t));
  memcpy(header, words, length);
  int64_t strong = adopt(c, r, i, address, words, words[-1]);
  if (strong == -3) return -1;
  if (strong == -2) return 0;
  c->flags[i] |= CF_VALID;
  if (strong < 0) {
    c->flags[i] |= CF_RC_UNKNOWN;
    strong = 0;
  }
  if (strong < INT16_MAX) {
    c->refs[i] = (int16_t)strong;
  } else {
    if (c->large_ref_count == c->large_ref_capacity) return -1;
    c->refs[i] = CH_REFS_LARGE;
    int32_t large = strong > INT32_MAX ? INT32_MAX : (int32_t)strong;
    c->large_refs[c->large_ref_count++] = (ch_large_refs){(uint32_t)i, large};
  }
  c->live_bytes += ch_census_size(c, (int32_t)i);
  return 1;
}

const char *ch_census_object_pass(ch_census *c, finder *f, rules *r, window *w,
                                  size_t edge_capacity) {
  size_t edges = 0;
  uint64_t header[4];
  ch_row_cursor rows;
  ch_row_cursor_at(&rows, c->rows, 0);
  for (size_t i = 0; i < c->row_count; i++) {
    uintptr_t address = ch_row_cursor_next(&rows);
    if (i % CH_EDGE_BLOCK == 0) c->edge_blocks[i / CH_EDGE_BLOCK] = (uint32_t)edges;
    int valid = validate_row(c, r, w, i, address, header);
    if (valid < 0) return "too many types, large objects or counts for the census's tables";
    if (!valid) continue;
    const word_rule *rule = &r->slots[c->type_of[i]];
    size_t first = edges;
    if (!collect_edges(c, f, rule, w, address, ch_census_size(c, (int32_t)i), header, &edges,
                       edge_capacity)) {
      return "too many references between objects for the census's edge table";
    }
    size_t count = edges - first;
    if (count < CH_EDGES_LARGE) {
      c->edge_counts[i] = (uint8_t)count;
    } else {
      if (c->large_count_count == c->large_count_capacity) {
        return "too many references between objects for the census's edge table";
      }
      c->edge_counts[i] = CH_EDGES_LARGE;
      c->large_counts[c->large_count_count++] = (ch_large_count){(uint32_t)i, (uint32_t)count};
    }
  }
  c->edge_blocks[c->row_count / CH_EDGE_BLOCK + 1] = (uint32_t)edges;
  c->edge_count = edges;
  return NULL;
}

/// The entry of a row with CH_REFS_LARGE.
static ch_large_refs *large_refs_of(const ch_census *c, int32_t row) {
  size_t low = 0, high = c->large_ref_count;
  while (low < high) {
    size_t middle = (low + high) / 2;
    if (c->large_refs[middle].row < (uint32_t)row) low = middle + 1; else high = middle;
  }
  return &c->large_refs[low];
}

int32_t ch_census_refs(const ch_census *c, int32_t row) {
  int16_t refs = c->refs[row];
  return refs != CH_REFS_LARGE ? refs : large_refs_of(c, row)->refs;
}

/// One reference from another object subtracted from `row`'s count. A 16-bit count stops
/// one above CH_REFS_LARGE: below zero, only its sign matters (mark, mark_reachable).
static void subtract_one(ch_census *c, int32_t row) {
  int16_t refs = c->refs[row];
  if (refs == CH_REFS_LARGE) {
    large_refs_of(c, row)->refs--;
  } else if (refs > CH_REFS_LARGE + 1) {
    c->refs[row] = (int16_t)(refs - 1);
  }
}

uint32_t ch_census_large_edge_count(const ch_census *c, int32_t row) {
  size_t low = 0, high = c->large_count_count;
  while (low < high) {
    size_t middle = (low + high) / 2;
    if (c->large_counts[middle].row < (uint32_t)row) low = middle + 1; else high = middle;
  }
  return low < c->large_count_count ? c->large_counts[low].count : 0;
}

void ch_census_subtract_internal(ch_census *c) {
  uint32_t end = 0;  // the rows' edges are consecutive, in row order
  for (size_t i = 0; i < c->row_count; i++) {
    uint32_t first = end;
    end += ch_census_edge_count(c, (int32_t)i);
    if (!(c->flags[i] & CF_VALID)) continue;
    for (uint32_t e = first; e < end; e++) {
      int32_t t = edge_target(c->edges[e]);
      if (!(c->flags[t] & CF_VALID)) {
        c->edges[e] = EDGE_DROPPED;
        continue;
      }
      if (c->edges[e] >= 0) subtract_one(c, t);
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

/// Pass 2 (census.h). Words
/// inside valid objects are references, not roots; words in free chunks are stale; a side
/// table's pointer back at its object owns nothing.
void ch_census_root_pass(ch_census *c, const ch_region *regions, size_t region_count,
                      uint64_t *buffer, uintptr_t own_frame) {
  free_walk walks[MAX_FREE_WALKS];
  size_t walk_count = 0;
  uintptr_t low = c->row_count ? c->rows->low : 1;
  uintptr_t high =
      c->row_count ? c->rows->high + ch_census_size(c, (int32_t)(c->row_count - 1)) : 0;
  for (size_t r = 0; r < region_count; r++) {
    const ch_region *region = &regions[r];
    uintptr_t start = region->start;
    // The census's own frames hold nothing of the program's.
    if (own_frame > start && own_frame < region->end) {
      start = own_frame;
    }
    size_t next_row = rows_at_or_below(c, start);
    next_row = next_row > 0 ? next_row - 1 : 0;
    // The next row's address, from a cursor: the rows ahead are visited in order.
    ch_row_cursor ahead;
    ch_row_cursor_at(&ahead, c->rows, next_row);
    uintptr_t next_address = ch_row_cursor_next(&ahead);
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
          while (next_row < c->row_count) {
            uint64_t size = ch_census_size(c, (int32_t)next_row);
            if (next_address + (size ? size : 16) > address) break;
            next_row++;
            next_address = ch_row_cursor_next(&ahead);
          }
          if (next_row < c->row_count && (c->flags[next_row] & CF_VALID) &&
              next_address <= address) {
            continue;
          }
        }
        int32_t target = enclosing(c, key);
        if (target < 0) continue;
        if (c->flags[target] & CF_ROOT_WORD) continue;
        if (region->kind == CH_REGION_HEAP) {
          uint64_t bits = 0;
          ch_read(&bits, ch_census_address(c, target) + 8, 8);
          if (ch_is_side_table_word(bits, address)) continue;
          if (in_free_chunk(c, walks, &walk_count, region, address)) continue;
        }
        c->flags[target] |= CF_ROOT_WORD;
      }
      at += got;
    }
  }
}
int32_t ch_census_exact(const finder *f, uintptr_t key) { return exact(f, key); }
