// Grouping the unreachable objects as `leaks` does: strongly connected components
// (Tarjan), ROOT CYCLE / ROOT LEAK groups with what each alone keeps, the cycle through each
// root, the tree of the first group of each finding, and the finding ids.
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"

// ---- grouping ----------------------------------------------------------------------------
//
// Only the unreachable objects take part, renumbered densely (`unit` numbers): the arrays
// below are sized by how many there are, not by the heap, so a census of a large heap with
// few leaks costs no more memory than its marks.

typedef struct {
  ch_census *c;
  // Which rows are units, a bit per row, and the units before every 64 rows: a row's unit
  // is a rank, a quarter of a byte per row rather than a 32-bit number.
  uint64_t *is_unit;
  uint32_t *units_before;
  int32_t *row_of;  // per unit
  int32_t count;
} units;

/// The unit of `row`, or -1 (reachable, or not an object).
static inline int32_t unit_of(const units *u, int32_t row) {
  uint64_t bits = u->is_unit[row / 64];
  uint64_t bit = 1ull << (row % 64);
  if (!(bits & bit)) return -1;
  return (int32_t)(u->units_before[row / 64] + (uint32_t)__builtin_popcountll(bits & (bit - 1)));
}

/// The unit an edge leads to, or -1 when it leads to no unreachable object.
static inline int32_t unit_target(const units *u, uint32_t e) {
  int32_t t = edge_target(u->c->edges[e]);
  return t < 0 ? -1 : unit_of(u, t);
}

static inline uint32_t first_edge(const units *u, int32_t unit) {
  return ch_census_first_edge(u->c, u->row_of[unit]);
}

static inline uint32_t end_edge(const units *u, int32_t unit) {
  int32_t row = u->row_of[unit];
  return ch_census_first_edge(u->c, row) + ch_census_edge_count(u->c, row);
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
      uint32_t end = end_edge(u, v);
      while (*e < end) {
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
    for (uint32_t e = first_edge(u, x), end = end_edge(u, x); e < end; e++) {
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
  g->tree[0] = (ch_tree_line){g->root, -1, 0, 0, 0, 1, ch_census_size(c, g->root)};
  line_unit[0] = root;
  g->tree_count = 1;
  shown[root] = 1;
  shown_list[(*shown_count)++] = root;
  frames[depth++] = (frame){0, first_edge(u, root)};
  while (depth > 0) {
    frame *f = &frames[depth - 1];
    int32_t x = line_unit[f->line];
    int descended = 0;
    uint32_t end = end_edge(u, x);
    while (f->edge < end && g->tree_count < CH_TREE_LINES) {
      uint32_t e = f->edge++;
      int32_t t = unit_target(u, e);
      if (t < 0 || group_of[t] != group) continue;
      int32_t row = u->row_of[t];
      ch_tree_line line = {row, f->line, g->tree[f->line].depth + 1, 0,
                           ch_census_edge_offset(c, u->row_of[x], row), 1, ch_census_size(c, row)};
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

/// Orders step `i` of a cycle against step `j`: by type name, then field offset.
static int compare_steps(ch_census *c, const ch_group *g, size_t i, size_t j) {
  size_t li, lj;
  const char *ni = ch_census_type_name(ch_census_metadata(c, g->cycle_rows[i]), &li);
  const char *nj = ch_census_type_name(ch_census_metadata(c, g->cycle_rows[j]), &lj);
  int order = memcmp(ni, nj, li < lj ? li : lj);
  if (order == 0) order = li < lj ? -1 : li > lj;
  if (order == 0) {
    order = g->cycle_offsets[i] < g->cycle_offsets[j] ? -1 : g->cycle_offsets[i] > g->cycle_offsets[j];
  }
  return order;
}

/// Where the cycle's lexicographically smallest rotation starts: the same cycle entered
/// at another member (two objects of one type, say) reads the same from there. Quadratic in
/// the cycle's length, which `CH_CYCLE_EDGES` bounds.
static size_t smallest_rotation(ch_census *c, const ch_group *g) {
  size_t n = g->cycle_length, best = 0;
  for (size_t r = 1; r < n; r++) {
    for (size_t k = 0; k < n; k++) {
      int order = compare_steps(c, g, (r + k) % n, (best + k) % n);
      if (order < 0) best = r;
      if (order != 0) break;
    }
  }
  return best;
}

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
  // the offsets stand for the field names without reading the objects again. Hashed from the
  // cycle's smallest rotation, so that the root's choice (by address among members of one
  // type) never changes the id.
  size_t start = smallest_rotation(c, g);
  for (size_t k = 0; k < g->cycle_length; k++) {
    size_t i = (start + k) % g->cycle_length;
    size_t length;
    const char *name = ch_census_type_name(ch_census_metadata(c, g->cycle_rows[i]), &length);
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
  const char *best_name = ch_census_type_name(ch_census_metadata(c, u->row_of[best]), &best_length);
  for (uint32_t i = from + 1; i < to; i++) {
    int32_t m = members[i];
    size_t length;
    const char *name = ch_census_type_name(ch_census_metadata(c, u->row_of[m]), &length);
    size_t shorter = length < best_length ? length : best_length;
    int order = memcmp(name, best_name, shorter);
    if (order == 0) order = length < best_length ? -1 : length > best_length;
    if (order < 0 ||
        (order == 0 && u->row_of[m] < u->row_of[best])) {
      best = m;
      best_name = name;
      best_length = length;
    }
  }
  return best;
}

/// The grouping's work arrays, one slot per unit (m = units + 1), reused from phase to
/// phase as the comments say.
typedef struct {
  units u;
  size_t m;
  int32_t *component, *index, *low, *stack, *call_unit, *members;
  uint32_t *call_edge;
  uint8_t *on_stack;
  int32_t components;  // how many
  uint32_t *component_start;  // components + 1 offsets into `members`
  int32_t *roots;  // per group, its root unit
} grouping;

/// Numbers the unreachable rows densely, in row order, and maps the work arrays; 0 when out
/// of memory.
static int start_grouping(ch_census *c, grouping *w) {
  memset(w, 0, sizeof *w);
  size_t words = c->row_count / 64 + 1;
  w->u = (units){c, ch_bump_alloc(&c->bump, words * sizeof(uint64_t)),
                 ch_bump_alloc(&c->bump, words * sizeof(uint32_t)), NULL, 0};
  if (!w->u.is_unit || !w->u.units_before) return 0;
  for (size_t i = 0; i < c->row_count; i++) {
    if (i % 64 == 0) w->u.units_before[i / 64] = (uint32_t)w->u.count;
    if ((c->flags[i] & (CF_VALID | CF_MARKED | CF_DELAYED)) != CF_VALID) continue;
    w->u.is_unit[i / 64] |= 1ull << (i % 64);
    w->u.count++;
  }
  size_t m = w->m = (size_t)w->u.count + 1;
  w->u.row_of = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  w->component = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  w->index = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  w->low = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  w->stack = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  w->call_unit = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  w->call_edge = ch_bump_alloc(&c->bump, m * sizeof(uint32_t));
  w->on_stack = ch_bump_alloc(&c->bump, m);
  w->members = ch_bump_alloc(&c->bump, m * sizeof(int32_t));
  if (!w->u.row_of || !w->component || !w->index || !w->low || !w->stack || !w->call_unit ||
      !w->call_edge || !w->on_stack || !w->members) {
    return 0;
  }
  int32_t unit = 0;
  for (size_t i = 0; i < c->row_count; i++) {
    if (w->u.is_unit[i / 64] & (1ull << (i % 64))) w->u.row_of[unit++] = (int32_t)i;
  }
  memset(w->on_stack, 0, m);
  return 1;
}

/// Which components another unreachable object references (`index` reused as
/// `referenced`), which reference themselves (`on_stack` as `self_edge`), and each
/// component's members, contiguous (a counting sort, `call_unit` as the sizes); also sets
/// every unit's group (`low` as `group_of`) to none.
static int sort_components(ch_census *c, grouping *w) {
  const units *u = &w->u;
  int32_t *referenced = w->index, *group_of = w->low, *size = w->call_unit;
  uint8_t *self_edge = w->on_stack;
  w->component_start = ch_bump_alloc(&c->bump, ((size_t)w->components + 2) * sizeof(uint32_t));
  if (!w->component_start) return 0;
  for (int32_t k = 0; k < w->components; k++) {
    referenced[k] = 0;
    self_edge[k] = 0;
    size[k] = 0;
  }
  for (int32_t x = 0; x < u->count; x++) {
    group_of[x] = -1;
    size[w->component[x]]++;
    for (uint32_t e = first_edge(u, x), end = end_edge(u, x); e < end; e++) {
      int32_t t = unit_target(u, e);
      if (t < 0) continue;
      if (w->component[t] != w->component[x]) referenced[w->component[t]] = 1;
      if (t == x) self_edge[w->component[x]] = 1;
    }
  }
  w->component_start[0] = 0;
  for (int32_t k = 0; k < w->components; k++) {
    w->component_start[k + 1] = w->component_start[k] + (uint32_t)size[k];
    size[k] = 0;
  }
  for (int32_t x = 0; x < u->count; x++) {
    int32_t k = w->component[x];
    w->members[w->component_start[k] + (uint32_t)size[k]++] = x;
  }
  return 1;
}

/// Group `id` from the unreferenced component `k`: its root, and every unassigned
/// unreachable object the component reaches, breadth first (`stack` as the queue); its
/// counts, bytes and types.
static void claim_group(ch_census *c, grouping *w, int32_t k, int32_t x, int32_t id) {
  const units *u = &w->u;
  int32_t *group_of = w->low, *queue = w->stack;
  ch_group *g = &c->groups[id];
  memset(g, 0, sizeof *g);
  uint32_t from = w->component_start[k], to = w->component_start[k + 1];
  g->cycle = to - from > 1 || w->on_stack[k];
  w->roots[id] = g->cycle ? canonical_root(u, w->members, from, to) : x;
  g->root = u->row_of[w->roots[id]];
  g->same_as = -1;
  size_t head = 0, tail = 0;
  for (uint32_t i = from; i < to; i++) {
    group_of[w->members[i]] = id;
    queue[tail++] = w->members[i];
  }
  while (head < tail) {
    int32_t y = queue[head++];
    for (uint32_t e = first_edge(u, y), end = end_edge(u, y); e < end; e++) {
      int32_t t = unit_target(u, e);
      if (t < 0 || group_of[t] >= 0) continue;
      group_of[t] = id;
      queue[tail++] = t;
    }
  }
  for (size_t i = 0; i < tail; i++) {
    int32_t row = u->row_of[queue[i]];
    uint64_t size = ch_census_size(c, row);
    g->count++;
    g->bytes += size;
    add_type(g, ch_census_metadata(c, row), size);
  }
  c->unreachable += g->count;
  c->unreachable_bytes += g->bytes;
}

/// One group per unreferenced component, roots in address order (the order the heap
/// allocated them, roughly); then each group's cycle and finding hash.
static int make_groups(ch_census *c, grouping *w) {
  const int32_t *referenced = w->index, *group_of = w->low;
  c->group_capacity = 0;
  for (int32_t k = 0; k < w->components; k++) c->group_capacity += !referenced[k];
  c->groups = ch_bump_alloc(&c->bump, (c->group_capacity + 1) * sizeof(ch_group));
  w->roots = ch_bump_alloc(&c->bump, (c->group_capacity + 1) * sizeof(int32_t));
  if (c->groups == NULL || w->roots == NULL) return 0;
  for (int32_t x = 0; x < w->u.count; x++) {
    int32_t k = w->component[x];
    if (referenced[k] || group_of[x] >= 0) continue;
    claim_group(c, w, k, x, (int32_t)c->group_count++);
  }
  int32_t *via = (int32_t *)w->call_edge;
  for (int32_t x = 0; x < w->u.count; x++) via[x] = -1;
  for (size_t id = 0; id < c->group_count; id++) {
    ch_group *g = &c->groups[id];
    if (g->cycle) find_cycle(&w->u, g, w->roots[id], w->component, w->stack, via);
    finish_group(c, g);
  }
  return 1;
}

/// Same shape, same finding: the first group of each id counts the others (a table of
/// first groups by hash, open addressing).
static int merge_same_shapes(ch_census *c) {
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
  return 1;
}

/// Trees for the first group of each finding (the only ones written), with `index` as the
/// "shown" marks and `call_unit` as their list; 0 when out of memory.
static int build_trees(ch_census *c, grouping *w) {
  uint8_t *shown = (uint8_t *)w->index;
  int32_t *shown_list = w->call_unit;
  memset(shown, 0, w->m);
  for (size_t id = 0; id < c->group_count; id++) {
    ch_group *g = &c->groups[id];
    if (g->same_as >= 0) continue;
    g->tree = ch_bump_alloc(&c->bump, CH_TREE_LINES * sizeof(ch_tree_line));
    if (g->tree == NULL) return 0;
    size_t shown_count = 0;
    build_tree(&w->u, g, w->roots[id], w->low, (int32_t)id, shown, shown_list, &shown_count);
    for (size_t k = 0; k < shown_count; k++) shown[shown_list[k]] = 0;
  }
  return 1;
}

int ch_census_group(ch_census *c) {
  grouping w;
  if (!start_grouping(c, &w)) return 0;
  w.components = components(&w.u, w.component, w.index, w.low, w.stack, w.call_unit,
                            w.call_edge, w.on_stack);
  return sort_components(c, &w) && make_groups(c, &w) && merge_same_shapes(c) &&
         build_trees(c, &w);
}
