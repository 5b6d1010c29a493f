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
  CF_UNSCANNED = 64,  // marked, its edges not followed yet (the mark's list was full)
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
  ch_tree_line *tree;  // CH_TREE_LINES, for the first group of each finding only
  size_t tree_count;
  uint64_t hash;  // finding id: the shape of types and fields
  int32_t same_as;  // the first group of the same id, or -1
  uint32_t instances;  // groups with this id (on the first one)
  int library;  // every typed member comes from a library module
} ch_group;

/// A growing type's instance, for its holder path (census_growth.c).
#define CH_GROWTH_PICKS 4
typedef struct {
  uintptr_t metadata;
  uintptr_t address;  // 0 when no reachable instance could be picked
  int known_new;  // not there at the previous census (else its age is unknown)
  uint64_t previous_count, count;
  const char *name;  // the type's name (ch_census_type_name: kept for the process's life)
  size_t name_length;
} ch_growth_pick;

// ---- census_rows.c: the rows, read from the registry's bitmaps -------------------------
/// One registry span's words between its first and last object, copied.
typedef struct {
  uintptr_t base;  // the address of the first copied word's first granule
  uint32_t words;
  uint64_t *bits;  // `words` words; bit i of word w: the object at base + (64 w + i) * 16
  uint32_t *block_rows;  // per 8 words: the rows before them (over every span)
  size_t first_row, end_row;
} ch_row_span;

typedef struct {
  ch_row_span *spans;
  size_t span_count;
  size_t count;  // rows
  uintptr_t low, high;  // the first and the last row's address
} ch_rows;

/// Copies the registry's bitmaps (census_rows.c says why and what it costs); call with the
/// other threads parked. 0 when memory ran out.
int ch_rows_build(ch_rows *r, ch_bump *bump);
/// How many rows start at or below `address`.
size_t ch_rows_at_or_below(const ch_rows *r, uintptr_t address);
/// The row of the object starting exactly at `key`, or -1.
int32_t ch_rows_exact(const ch_rows *r, uintptr_t key);
/// The address of `row` (< r->count).
uintptr_t ch_row_address(const ch_rows *r, size_t row);

/// Visits rows in address order without a search per row.
typedef struct {
  const ch_rows *rows;
  size_t span;
  uint32_t word;  // the next word to load
  uint64_t bits;  // the loaded word's rows not visited yet
} ch_row_cursor;
/// A cursor whose next row is `row`.
void ch_row_cursor_at(ch_row_cursor *k, const ch_rows *r, size_t row);
/// The next row's address, or 0 past the last one.
uintptr_t ch_row_cursor_next(ch_row_cursor *k);

/// A row whose size does not fit its size byte (census.c: ch_census_size).
typedef struct {
  uint32_t row;
  uint64_t size;
} ch_large_size;
#define CH_SIZE_LARGE 255

/// A row whose count does not fit 16 bits.
typedef struct {
  uint32_t row;
  int32_t refs;
} ch_large_refs;
#define CH_REFS_LARGE INT16_MIN

/// A row whose edges do not fit its count byte.
typedef struct {
  uint32_t row, count;
} ch_large_count;
#define CH_EDGES_LARGE 255
#define CH_EDGE_BLOCK 16

typedef struct {
  ch_bump bump;
  ch_rows *rows;  // in bump memory
  size_t row_count;
  uint8_t *flags;
  uint16_t *type_of;  // per valid row: its type's slot in `types`
  const struct word_rule *types;  // the census's type rules (TYPE_SLOTS), by slot
  uint8_t *size_of;  // per valid row: its chunk's size / 16, or CH_SIZE_LARGE
  ch_large_size *large_sizes;  // the rows with CH_SIZE_LARGE, ascending
  size_t large_size_count, large_size_capacity;
  // A row's strong count minus the references from other objects: 16 bits, or
  // CH_REFS_LARGE and its value in `large_refs` (a count past 32k is rare: a shared
  // singleton), so that the count costs 2 bytes a row.
  int16_t *refs;
  ch_large_refs *large_refs;  // the rows with CH_REFS_LARGE, ascending
  size_t large_ref_count, large_ref_capacity;
  // A row's edges are `edges[first, first + count)`: its count in a byte, and its first edge
  // the sum of the counts before it since the last block start (ch_census_first_edge), so
  // that the index costs 1.25 bytes a row instead of a 32-bit offset.
  uint8_t *edge_counts;  // per row: how many edges, or CH_EDGES_LARGE (then `large_counts`)
  uint32_t *edge_blocks;  // per CH_EDGE_BLOCK rows: the edges before them
  ch_large_count *large_counts;  // the rows with CH_EDGES_LARGE, ascending
  size_t large_count_count, large_count_capacity;
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
  size_t mark_capacity;  // the mark's work list, in rows
  size_t resident_bytes;  // the census's memory in use at its end, but its fixed tables
  size_t type_count;  // distinct types among the valid rows
  ch_growth_pick picks[CH_GROWTH_PICKS];  // growing types of this label (census_growth.c)
  size_t pick_count;
  ch_park park;
  uint64_t started_ns, total_us;
} ch_census;

/// The address of `row`.
static inline uintptr_t ch_census_address(const ch_census *c, int32_t row) {
  return ch_row_address(c->rows, (size_t)row);
}
/// The metadata of valid `row` (0 for any other row).
uintptr_t ch_census_metadata(const ch_census *c, int32_t row);
/// The size of valid `row` (its chunk's usable bytes; 0 for any other row).
uint64_t ch_census_size(const ch_census *c, int32_t row);

/// The count left over of valid `row`: its strong count minus the references from other
/// objects subtracted so far (census_read.c).
int32_t ch_census_refs(const ch_census *c, int32_t row);

/// The count of a row with CH_EDGES_LARGE edges (census_read.c).
uint32_t ch_census_large_edge_count(const ch_census *c, int32_t row);
/// How many edges `row` has.
static inline uint32_t ch_census_edge_count(const ch_census *c, int32_t row) {
  uint8_t count = c->edge_counts[row];
  return count != CH_EDGES_LARGE ? count : ch_census_large_edge_count(c, row);
}
/// The index in `edges` of `row`'s first edge.
static inline uint32_t ch_census_first_edge(const ch_census *c, int32_t row) {
  uint32_t first = c->edge_blocks[row / CH_EDGE_BLOCK];
  for (int32_t y = row & ~(CH_EDGE_BLOCK - 1); y < row; y++) first += ch_census_edge_count(c, y);
  return first;
}

/// The type name of the object with `metadata`: "closure context", "box", or the runtime's
/// qualified name.
const char *ch_census_type_name(uintptr_t metadata, size_t *length);
/// The name of the word at `offset` in `row`'s object ("payment", "[2]", "captures"), or
/// NULL when it has none; written into `buffer`.
const char *ch_census_edge_name(ch_census *c, int32_t row, uint32_t offset, char *buffer,
                                size_t capacity);
/// The offset of the first owning word in `holder` that points at `target`, or 0.
uint32_t ch_census_edge_offset(ch_census *c, int32_t holder, int32_t target);

// ---- shared by the census's passes (census.c, census_read.c, census_rules.c, census_group.c)

#define SPARE_BITS_STRIPPED 0x00fffffffffffff8ull  // SWIFT_ABI_DEFAULT_64BIT_SPARE_BITS_MASK
#define WINDOW_BYTES (1u << 18)
#define TYPE_SLOTS (1u << 16)
#define STALE_WORDS 64

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

// census_rules.c: what each type's words mean.
enum { WORDS_OWNING = 0, WORDS_CLASS = 1, WORDS_ARRAY = 2 };

/// Per metadata: which words own what they point at. Filled once per type, before threads
/// are parked where possible (it asks the runtime for names, which takes its locks).
typedef struct word_rule {
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
  size_t count;  // types with a rule
} rules;

/// The rule of the type with `metadata`, made on first use (it asks the runtime for field
/// names, which takes its locks: met first while other threads are parked, that waits).
const word_rule *ch_census_rule_of(rules *r, uintptr_t metadata);

enum { WORD_NONE = 0, WORD_CERTAIN = 1, WORD_MAYBE = 2 };

/// What the word at `offset` of an object (its first words in `header`) is: no reference, a
/// reference the metadata vouches for, or a word that may be one (see edge_target).
static inline int owns(const word_rule *rule, const uint64_t *header, uint64_t offset) {
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

// census_read.c: the passes over memory.
typedef struct {
  ch_census *c;
} finder;

typedef struct {
  uint64_t *buffer;  // WINDOW_BYTES
  uintptr_t start, end;  // what `buffer` holds
} window;

/// The row of the object starting exactly at `key`, or -1.
int32_t ch_census_exact(const finder *f, uintptr_t key);
/// Pass 1: validates every row and collects its owning words that point at rows; returns
/// why it failed (a table full), or NULL.
const char *ch_census_object_pass(ch_census *c, finder *f, rules *r, window *w,
                                  size_t edge_capacity);
/// Pass 2: every root word that points into a valid object flags it CF_ROOT_WORD.
void ch_census_root_pass(ch_census *c, const ch_region *regions, size_t region_count,
                         uint64_t *buffer, uintptr_t own_frame);
/// Subtracts the references between valid objects; drops edges into invalid rows.
void ch_census_subtract_internal(ch_census *c);

// census_group.c
/// Groups the unreachable objects; 0 when out of memory.
int ch_census_group(ch_census *c);

// ---- census_growth.c ---------------------------------------------------------------------
/// Compares this census's live counts (`live`, most numerous first) with the label's
/// earlier censuses, picks an instance of each type that rose at every one (c->picks), and
/// keeps what the next census of the label compares with. Under the census lock.
void ch_census_growth(ch_census *c, const ch_type_count *live, size_t types);
/// `json` (the record's members, malloc'ed) with `,"growing":[…]` appended when the census
/// picked growing instances: each with its holder path, from a holder scan run now. Call
/// with the census lock released (the scan takes its own). Frees `json` when it grows it.
char *ch_census_growth_json(char *json, const ch_census *c);

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
