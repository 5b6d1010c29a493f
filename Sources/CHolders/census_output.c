// What a census says: the `census` record's members as JSON (docs/log-format.md), and the
// same groups as text in the style of Apple's `leaks` for stderr.
//
// Both are built after the threads went on, from the census's tables, in malloc memory
// (text and hex strings only, never raw addresses). A census of a huge heap stays bounded:
// at most CH_CENSUS_FULL_FINDINGS findings are written in full, the rest are summed by type.
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "CHoldersExtras.h"
#include "CUnwind.h"
#include "alloc_stacks.h"
#include "census.h"

#define CH_CENSUS_FULL_FINDINGS 50
#define CH_CENSUS_LIVE_TYPES 200
#define CH_CENSUS_MORE_TYPES 20

// ---- text with every byte a terminal could act on escaped ---------------------------------

static void text_raw(ch_json *out, const char *text) { ch_json_raw(out, text); }

/// Appends `length` bytes of program text (a type or field name) with control bytes, DEL
/// and bytes of invalid UTF-8 written as \xNN, so nothing reaches the terminal raw.
static void text_escaped(ch_json *out, const char *text, size_t length) {
  char piece[8];
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c < 0x20 || c == 0x7f || c >= 0x80) {
      // Multi-byte UTF-8 is kept only when well formed (the JSON writer's own check).
      if (c >= 0xc2 && c <= 0xf4) {
        size_t n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        int valid = i + n <= length;
        for (size_t k = 1; valid && k < n; k++) valid = ((unsigned char)text[i + k] & 0xc0) == 0x80;
        if (valid) {
          memcpy(piece, text + i, n);
          piece[n] = 0;
          ch_json_raw(out, piece);
          i += n - 1;
          continue;
        }
      }
      snprintf(piece, sizeof piece, "\\x%02x", c);
      ch_json_raw(out, piece);
    } else {
      piece[0] = (char)c;
      piece[1] = 0;
      ch_json_raw(out, piece);
    }
  }
}

static void text_format(ch_json *out, const char *format, unsigned long long a,
                        unsigned long long b) {
  char line[128];
  snprintf(line, sizeof line, format, a, b);
  ch_json_raw(out, line);
}

static void text_object(ch_census *c, ch_json *out, int32_t row) {
  size_t length;
  const char *name = ch_census_type_name(ch_census_metadata(c, row), &length);
  text_raw(out, "<");
  text_escaped(out, name, length);
  text_format(out, " 0x%llx> [%llu]", (unsigned long long)ch_census_address(c, row),
              (unsigned long long)ch_census_size(c, row));
}

// ---- shared pieces -----------------------------------------------------------------------

static void json_type(ch_json *json, uintptr_t metadata) {
  size_t length;
  const char *name = ch_census_type_name(metadata, &length);
  ch_json_string(json, name, length);
}

static void json_counts(ch_json *json, uint64_t count, uint64_t bytes) {
  ch_json_raw(json, ",\"count\":");
  ch_json_int(json, (int64_t)count);
  ch_json_raw(json, ",\"bytes\":");
  ch_json_int(json, (int64_t)bytes);
}

static void finding_id(const ch_group *g, char *id, size_t capacity) {
  snprintf(id, capacity, "%012llx", (unsigned long long)(g->hash & 0xffffffffffffull));
}

/// `Type.field → Type.field → Type`, the cycle as the holder paths name its references.
static void cycle_text(ch_census *c, const ch_group *g, ch_json *out) {
  for (size_t i = 0; i < g->cycle_length; i++) {
    size_t length;
    const char *name = ch_census_type_name(ch_census_metadata(c, g->cycle_rows[i]), &length);
    char field[128];
    const char *edge =
        ch_census_edge_name(c, g->cycle_rows[i], g->cycle_offsets[i], field, sizeof field);
    text_escaped(out, name, length);
    ch_json_raw(out, edge && edge[0] == '[' ? "" : ".");
    if (edge) text_escaped(out, edge, strlen(edge));
    ch_json_raw(out, " \xe2\x86\x92 ");
  }
  if (g->cycle_length > 0) {
    size_t length;
    const char *name = ch_census_type_name(ch_census_metadata(c, g->cycle_rows[0]), &length);
    text_escaped(out, name, length);
  }
}

// ---- JSON --------------------------------------------------------------------------------

/// `members`: a TYPE-COUNT per type of one instance, then the types past CH_GROUP_TYPES.
static void json_members(ch_json *json, const ch_group *g) {
  ch_json_raw(json, ",\"members\":[");
  for (size_t i = 0; i < g->type_count; i++) {
    if (i) ch_json_raw(json, ",");
    ch_json_raw(json, "{\"type\":");
    json_type(json, g->types[i].metadata);
    json_counts(json, g->types[i].count, g->types[i].bytes);
    ch_json_raw(json, "}");
  }
  if (g->other_count) {
    if (g->type_count) ch_json_raw(json, ",");
    ch_json_raw(json, "{\"type\":\"(other types)\"");
    json_counts(json, g->other_count, g->other_bytes);
    ch_json_raw(json, "}");
  }
  ch_json_raw(json, "]");
}

/// `edges`: the cycle through the root, by type and field.
static void json_edges(ch_census *c, ch_json *json, const ch_group *g) {
  ch_json_raw(json, ",\"edges\":[");
  for (size_t i = 0; i < g->cycle_length; i++) {
    if (i) ch_json_raw(json, ",");
    ch_json_raw(json, "{\"type\":");
    json_type(json, ch_census_metadata(c, g->cycle_rows[i]));
    char field[128];
    const char *edge =
        ch_census_edge_name(c, g->cycle_rows[i], g->cycle_offsets[i], field, sizeof field);
    ch_json_raw(json, ",\"field\":");
    ch_json_string(json, edge ? edge : "", edge ? strlen(edge) : 0);
    ch_json_raw(json, "}");
  }
  ch_json_raw(json, "]");
}

/// One line of `tree`.
static void json_tree_line(ch_census *c, ch_json *json, const ch_group *g,
                           const ch_tree_line *line) {
  ch_json_raw(json, "{\"depth\":");
  ch_json_int(json, line->depth);
  ch_json_raw(json, ",\"type\":");
  json_type(json, ch_census_metadata(c, line->object));
  ch_json_raw(json, ",\"obj\":");
  ch_json_hex(json, ch_census_address(c, line->object));
  ch_json_raw(json, ",\"size\":");
  ch_json_int(json, (int64_t)ch_census_size(c, line->object));
  if (line->parent >= 0) {
    char field[128];
    const char *edge = ch_census_edge_name(c, g->tree[line->parent].object, line->offset,
                                           field, sizeof field);
    if (edge) {
      ch_json_raw(json, ",\"via\":");
      ch_json_string(json, edge, strlen(edge));
    }
  }
  if (line->back) {
    ch_json_raw(json, ",\"back\":true");
  } else {
    json_counts(json, line->retained_count, line->retained_bytes);
  }
  ch_json_raw(json, "}");
}

/// `allocStack`: where the group's root object was allocated, as a `stack` record's frames
/// (return address, module, offset, symbol); nothing when allocation stacks are off or the
/// root has none (allocated before they started, or dropped by a full table).
static void json_alloc_stack(ch_census *c, ch_json *json, const ch_group *g) {
  uintptr_t ips[CH_ALLOC_STACK_DEPTH];
  size_t n = ch_alloc_stacks_lookup(ch_census_address(c, g->root), ips, CH_ALLOC_STACK_DEPTH);
  if (n == 0) return;
  ch_json_raw(json, ",\"allocStack\":[");
  char module[1024], symbol[2048];
  for (size_t i = 0; i < n; i++) {
    if (i) ch_json_raw(json, ",");
    ch_json_raw(json, "{\"ip\":");
    ch_json_hex(json, ips[i]);
    uintptr_t base = 0;
    // A return address: the call lies just before it.
    int found = cunwind_describe_address(ips[i] - 1, module, sizeof module, &base, symbol,
                                         sizeof symbol);
    if (found & CUNWIND_FOUND_MODULE) {
      ch_json_raw(json, ",\"mod\":");
      ch_json_string(json, module, strlen(module));
      ch_json_raw(json, ",\"off\":");
      ch_json_hex(json, ips[i] - base);
    }
    if (found & CUNWIND_FOUND_SYMBOL) {
      ch_json_raw(json, ",\"sym\":");
      ch_json_string(json, symbol, strlen(symbol));
    }
    ch_json_raw(json, "}");
  }
  ch_json_raw(json, "]");
}

/// `allocStacks`: allocations given a stack and those the full tables dropped, and the live
/// objects that have one now, when on.
static void json_alloc_stack_counts(ch_json *json) {
  cholders_alloc_stack_counts counts;
  cholders_alloc_stack_stats(&counts);
  if (!counts.on) return;
  ch_json_raw(json, ",\"allocStacks\":{\"recorded\":");
  ch_json_int(json, (int64_t)counts.recorded);
  ch_json_raw(json, ",\"dropped\":");
  ch_json_int(json, (int64_t)counts.dropped);
  ch_json_raw(json, ",\"objects\":");
  ch_json_int(json, (int64_t)counts.objects);
  if (counts.sample_every > 1) {
    ch_json_raw(json, ",\"sampleEvery\":");
    ch_json_int(json, (int64_t)counts.sample_every);
  }
  ch_json_raw(json, "}");
}

static void json_group(ch_census *c, ch_json *json, const ch_group *g, uint64_t count,
                       uint64_t bytes) {
  char id[24];
  finding_id(g, id, sizeof id);
  ch_json_raw(json, "{\"id\":\"");
  ch_json_raw(json, id);
  ch_json_raw(json, g->cycle ? "\",\"kind\":\"cycle\"" : "\",\"kind\":\"leak\"");
  ch_json_raw(json, ",\"instances\":");
  ch_json_int(json, g->instances);
  json_counts(json, count, bytes);
  if (g->library) ch_json_raw(json, ",\"library\":true");
  json_members(json, g);
  json_edges(c, json, g);
  ch_json_raw(json, ",\"tree\":[");
  for (size_t i = 0; i < g->tree_count; i++) {
    if (i) ch_json_raw(json, ",");
    json_tree_line(c, json, g, &g->tree[i]);
  }
  ch_json_raw(json, "]");
  json_alloc_stack(c, json, g);
  ch_json_raw(json, "}");
}

/// Group indexes in output order: the program's findings (largest first), then library
/// ones; only the first group of each finding id.
static size_t finding_order(ch_census *c, int32_t *order) {
  size_t n = 0;
  for (int library = 0; library <= 1; library++) {
    size_t first = n;
    for (size_t i = 0; i < c->group_count; i++) {
      const ch_group *g = &c->groups[i];
      if (g->same_as >= 0 || g->library != library) continue;
      order[n++] = (int32_t)i;
    }
    // Insertion sort by total bytes of the finding's instances, descending.
    for (size_t i = first + 1; i < n; i++) {
      int32_t value = order[i];
      size_t j = i;
      uint64_t bytes = c->groups[value].bytes * c->groups[value].instances;
      while (j > first &&
             c->groups[order[j - 1]].bytes * c->groups[order[j - 1]].instances < bytes) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = value;
    }
  }
  return n;
}

/// Totals of a finding over all its instances.
static void finding_totals(ch_census *c, int32_t first, uint64_t *count, uint64_t *bytes) {
  *count = 0;
  *bytes = 0;
  for (size_t i = 0; i < c->group_count; i++) {
    const ch_group *g = &c->groups[i];
    if ((int32_t)i == first || g->same_as == first) {
      *count += g->count;
      *bytes += g->bytes;
    }
  }
}

typedef ch_type_count type_total;

/// Adds to a small open-addressing table of per-type totals (`capacity` a power of two).
static void tally(type_total *table, size_t capacity, uintptr_t metadata, uint64_t count,
                  uint64_t bytes) {
  size_t slot = (size_t)((metadata >> 3) * 0x9E3779B97F4A7C15ull) & (capacity - 1);
  for (size_t probes = 0; probes < capacity; probes++) {
    if (table[slot].metadata == metadata || table[slot].metadata == 0) {
      table[slot].metadata = metadata;
      table[slot].count += count;
      table[slot].bytes += bytes;
      return;
    }
    slot = (slot + 1) & (capacity - 1);
  }
}

static int by_count(const void *a, const void *b) {
  const type_total *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return x->metadata < y->metadata ? -1 : x->metadata > y->metadata;
}

/// Sorts a tally table's used slots to its front (most objects first); returns how many.
static size_t sorted_totals(type_total *table, size_t capacity) {
  size_t n = 0;
  for (size_t i = 0; i < capacity; i++) {
    if (table[i].metadata) table[n++] = table[i];
  }
  qsort(table, n, sizeof *table, by_count);
  return n;
}

static void json_totals(ch_json *json, const type_total *rows, size_t n) {
  ch_json_raw(json, "[");
  for (size_t i = 0; i < n; i++) {
    if (i) ch_json_raw(json, ",");
    ch_json_raw(json, "{\"type\":");
    json_type(json, rows[i].metadata);
    json_counts(json, rows[i].count, rows[i].bytes);
    ch_json_raw(json, "}");
  }
  ch_json_raw(json, "]");
}

/// The tally tables' slots: twice the types the census met, a power of two (every type a
/// table counts is one of them), so that the table costs nothing like a fixed 3 MB.
static size_t tally_slots(const ch_census *c) {
  size_t slots = 64;
  while (slots < 2 * c->type_count && slots < 2 * TYPE_SLOTS) slots *= 2;
  return slots;
}

static void json_delayed(ch_census *c, ch_json *json, type_total *table) {
  const cholders_census_pending *p = c->pending;
  ch_json_raw(json, ",\"delayed\":[");
  size_t labels = p ? p->label_count : 0;
  int first = 1;
  for (size_t q = 0; q < labels; q++) {
    memset(table, 0, tally_slots(c) * sizeof *table);
    uint64_t count = 0, bytes = 0;
    for (size_t i = 0; i < p->count; i++) {
      int32_t row = c->pending_rows ? c->pending_rows[i] : -1;
      if (p->queue[i] != q || row < 0 || !(c->flags[row] & CF_DELAYED)) continue;
      count++;
      uint64_t size = ch_census_size(c, row);
      bytes += size;
      tally(table, tally_slots(c), ch_census_metadata(c, row), 1, size);
    }
    if (count == 0) continue;
    if (!first) ch_json_raw(json, ",");
    first = 0;
    ch_json_raw(json, "{\"q\":");
    const char *label = p->labels[q] ? p->labels[q] : "";
    ch_json_string(json, label, strlen(label));
    json_counts(json, count, bytes);
    size_t n = sorted_totals(table, tally_slots(c));
    ch_json_raw(json, ",\"types\":");
    json_totals(json, table, n < CH_CENSUS_MORE_TYPES ? n : CH_CENSUS_MORE_TYPES);
    ch_json_raw(json, "}");
  }
  ch_json_raw(json, "]");
}

/// The counts before `groups`: live objects and bytes, the program's and the libraries'
/// leaks, delayed objects.
static void json_counts_header(ch_census *c, ch_json *json) {
  uint64_t objects = 0, leaked = 0, leaked_bytes = 0, library = 0, library_bytes = 0;
  for (size_t i = 0; i < c->row_count; i++) objects += (c->flags[i] & CF_VALID) != 0;
  for (size_t i = 0; i < c->group_count; i++) {
    const ch_group *g = &c->groups[i];
    if (g->library) {
      library += g->count;
      library_bytes += g->bytes;
    } else {
      leaked += g->count;
      leaked_bytes += g->bytes;
    }
  }
  const char *names[] = {",\"objects\":",        ",\"bytes\":",
                         ",\"leaked\":",         ",\"leaked_bytes\":",
                         ",\"library_leaked\":", ",\"library_leaked_bytes\":",
                         ",\"delayed_objects\":"};
  uint64_t values[] = {objects, c->live_bytes, leaked, leaked_bytes,
                       library, library_bytes, c->delayed};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    ch_json_raw(json, names[i]);
    ch_json_int(json, (int64_t)values[i]);
  }
}

/// `more`: the findings not written in full, summed by type in one pass over the groups.
static void json_more(ch_census *c, ch_json *json, const int32_t *order, size_t findings,
                      size_t full, type_total *table) {
  memset(table, 0, tally_slots(c) * sizeof *table);
  uint64_t count = 0, bytes = 0;
  uint8_t *written = ch_bump_alloc(&c->bump, c->group_count + 1);
  if (written) {
    memset(written, 0, c->group_count + 1);
    for (size_t k = 0; k < full; k++) written[order[k]] = 1;
  }
  for (size_t i = 0; i < c->group_count && written; i++) {
    const ch_group *g = &c->groups[i];
    if (written[g->same_as >= 0 ? (size_t)g->same_as : i]) continue;
    count += g->count;
    bytes += g->bytes;
    for (size_t t = 0; t < g->type_count; t++) {
      tally(table, tally_slots(c), g->types[t].metadata, g->types[t].count, g->types[t].bytes);
    }
  }
  ch_json_raw(json, ",\"more\":{\"findings\":");
  ch_json_int(json, (int64_t)(findings - full));
  json_counts(json, count, bytes);
  size_t n = sorted_totals(table, tally_slots(c));
  ch_json_raw(json, ",\"types\":");
  json_totals(json, table, n < CH_CENSUS_MORE_TYPES ? n : CH_CENSUS_MORE_TYPES);
  ch_json_raw(json, "}");
}

/// `live`: per-type counts of every valid row. The same tally feeds the label's growth
/// (census_growth.c), which compares it with the label's earlier censuses.
static void json_live(ch_census *c, ch_json *json, type_total *table) {
  memset(table, 0, tally_slots(c) * sizeof *table);
  for (size_t i = 0; i < c->row_count; i++) {
    if (!(c->flags[i] & CF_VALID)) continue;
    tally(table, tally_slots(c), ch_census_metadata(c, (int32_t)i), 1,
          ch_census_size(c, (int32_t)i));
  }
  size_t types = sorted_totals(table, tally_slots(c));
  ch_census_growth(c, table, types);
  ch_json_raw(json, ",\"live\":");
  json_totals(json, table, types < CH_CENSUS_LIVE_TYPES ? types : CH_CENSUS_LIVE_TYPES);
  if (types > CH_CENSUS_LIVE_TYPES) {
    ch_json_raw(json, ",\"live_types_omitted\":");
    ch_json_int(json, (int64_t)(types - CH_CENSUS_LIVE_TYPES));
  }
}

static char *render_json(ch_census *c, const int32_t *order, size_t findings,
                         type_total *table) {
  ch_json json = {NULL, 0, 0, 0};
  ch_json_raw(&json, "\"label\":");
  ch_json_string(&json, c->label, strlen(c->label));
  if (c->error) {
    ch_json_raw(&json, ",\"error\":");
    ch_json_string(&json, c->error, strlen(c->error));
    ch_json_raw(&json, ",\"census_us\":");
    ch_json_int(&json, (int64_t)c->total_us);
    return json.bytes;
  }
  json_counts_header(c, &json);
  ch_json_raw(&json, ",\"groups\":[");
  size_t full = findings < CH_CENSUS_FULL_FINDINGS ? findings : CH_CENSUS_FULL_FINDINGS;
  for (size_t k = 0; k < full; k++) {
    if (k) ch_json_raw(&json, ",");
    uint64_t count, bytes;
    finding_totals(c, order[k], &count, &bytes);
    json_group(c, &json, &c->groups[order[k]], count, bytes);
  }
  ch_json_raw(&json, "]");
  if (findings > full) json_more(c, &json, order, findings, full, table);
  json_delayed(c, &json, table);
  json_live(c, &json, table);
  json_alloc_stack_counts(&json);
  ch_json_raw(&json, ",\"threads_stopped\":");
  ch_json_int(&json, (int64_t)c->park.stopped);
  ch_json_raw(&json, ",\"threads_unstopped\":");
  ch_json_int(&json, (int64_t)c->park.unstopped);
  ch_json_raw(&json, ",\"census_us\":");
  ch_json_int(&json, (int64_t)c->total_us);
  if (json.failed) {
    free(json.bytes);
    return NULL;
  }
  return json.bytes;
}

// ---- text --------------------------------------------------------------------------------

/// Frames of an allocation stack the text form shows, after the runtime's.
#define TEXT_ALLOC_FRAMES 6

/// "allocated at:" and the root's allocation frames, one a line, the Swift runtime's leading
/// frames left out (the JSON keeps them); nothing when the root has no stack, but "allocation
/// not sampled" when sampling left it out. A sampled run says its rate on either line.
static void text_alloc_stack(ch_census *c, ch_json *out, const ch_group *g) {
  uintptr_t ips[CH_ALLOC_STACK_DEPTH];
  size_t n = ch_alloc_stacks_lookup(ch_census_address(c, g->root), ips, CH_ALLOC_STACK_DEPTH);
  uint32_t every = ch_alloc_stacks_sample_every;
  if (n == 0) {
    if (ch_alloc_stacks_on && every > 1) {
      text_format(out, "    allocation not sampled (sampled 1 in %llu)\n", every, 0);
    }
    return;
  }
  if (every > 1) {
    text_format(out, "    allocated at (sampled 1 in %llu):\n", every, 0);
  } else {
    text_raw(out, "    allocated at:\n");
  }
  char module[1024], symbol[2048];
  size_t shown = 0;
  for (size_t i = 0; i < n && shown < TEXT_ALLOC_FRAMES; i++) {
    uintptr_t base = 0;
    module[0] = 0;
    int found = cunwind_describe_address(ips[i] - 1, module, sizeof module, &base, symbol,
                                         sizeof symbol);
    const char *file = strrchr(module, '/');
    file = file ? file + 1 : module;
    if (shown == 0 && (found & CUNWIND_FOUND_MODULE) && strncmp(file, "libswiftCore", 12) == 0) {
      continue;
    }
    text_raw(out, "      ");
    if (found & CUNWIND_FOUND_SYMBOL) {
      text_escaped(out, symbol, strlen(symbol));
    } else if (found & CUNWIND_FOUND_MODULE) {
      text_escaped(out, file, strlen(file));
      text_format(out, "+0x%llx", ips[i] - base, 0);
    } else {
      text_format(out, "0x%llx", ips[i], 0);
    }
    text_raw(out, "\n");
    shown++;
  }
}

static void text_group(ch_census *c, ch_json *out, const ch_group *g, uint64_t count,
                       uint64_t bytes) {
  for (size_t i = 0; i < g->tree_count; i++) {
    const ch_tree_line *line = &g->tree[i];
    for (int32_t d = 0; d < line->depth + 1; d++) text_raw(out, "   ");
    text_raw(out, " ");
    if (!line->back) {
      uint64_t n = i == 0 ? g->count : line->retained_count;
      uint64_t b = i == 0 ? g->bytes : line->retained_bytes;
      text_format(out, "%llu (%llu bytes) ", n, b);
    }
    if (line->parent >= 0) {
      char field[128];
      const char *edge = ch_census_edge_name(c, g->tree[line->parent].object, line->offset,
                                             field, sizeof field);
      if (edge) text_escaped(out, edge, strlen(edge));
      text_raw(out, " --> ");
    }
    if (i == 0) text_raw(out, g->cycle ? "ROOT CYCLE: " : "ROOT LEAK: ");
    if (line->back) text_raw(out, "CYCLE BACK TO ");
    text_object(c, out, line->object);
    text_raw(out, "\n");
  }
  if (g->tree_count == CH_TREE_LINES) text_raw(out, "       ... (tree cut)\n");
  text_alloc_stack(c, out, g);
  char id[24];
  finding_id(g, id, sizeof id);
  text_raw(out, "    ");
  if (g->cycle_length > 0) {
    text_raw(out, "cycle: ");
    cycle_text(c, g, out);
    text_raw(out, "; ");
  }
  text_raw(out, "id ");
  text_raw(out, id);
  if (g->instances > 1) {
    text_format(out, ", x%llu like it (%llu objects in all)", g->instances, count);
    text_format(out, ", %llu bytes", bytes, 0);
  }
  text_raw(out, "\n\n");
}

/// "Process N: M leaks for B total leaked bytes." as `leaks` says it; returns the
/// libraries' objects and bytes, shown apart.
static void text_header(ch_census *c, ch_json *out, uint64_t *library, uint64_t *library_bytes) {
  uint64_t leaked = 0, bytes = 0;
  *library = *library_bytes = 0;
  for (size_t i = 0; i < c->group_count; i++) {
    if (c->groups[i].library) {
      *library += c->groups[i].count;
      *library_bytes += c->groups[i].bytes;
    } else {
      leaked += c->groups[i].count;
      bytes += c->groups[i].bytes;
    }
  }
  text_format(out, leaked == 1 ? "Process %llu: %llu leak" : "Process %llu: %llu leaks",
              (unsigned long long)getpid(), leaked);
  text_format(out, " for %llu total leaked bytes.", bytes, 0);
  if (c->label[0]) {
    text_raw(out, " (census \"");
    text_escaped(out, c->label, strlen(c->label));
    text_raw(out, "\")");
  }
  text_raw(out, "\n\n");
}

/// The delayed objects, by queue, and the census's own line.
static void text_footer(ch_census *c, ch_json *out) {
  const cholders_census_pending *p = c->pending;
  if (c->delayed > 0 && p) {
    text_format(out, "Delayed (waiting in a DeallocQueue, not leaks): %llu objects", c->delayed, 0);
    for (size_t q = 0; q < p->label_count; q++) {
      uint64_t n = 0;
      for (size_t i = 0; i < p->count; i++) {
        int32_t row = c->pending_rows ? c->pending_rows[i] : -1;
        n += p->queue[i] == q && row >= 0 && (c->flags[row] & CF_DELAYED);
      }
      if (n == 0) continue;
      text_raw(out, "; queue \"");
      text_escaped(out, p->labels[q], strlen(p->labels[q]));
      text_format(out, "\": %llu queued", n, 0);
    }
    text_raw(out, "\n");
  }
  uint64_t objects = 0;
  for (size_t i = 0; i < c->row_count; i++) objects += (c->flags[i] & CF_VALID) != 0;
  text_format(out, "census: %llu live Swift objects, %llu us", objects, c->total_us);
  if (c->park.unstopped > 0) {
    text_format(out, " (%llu threads not stopped: their registers unseen)", c->park.unstopped, 0);
  }
  text_raw(out, "\n");
}

static char *render_text(ch_census *c, const int32_t *order, size_t findings) {
  ch_json out = {NULL, 0, 0, 0};
  if (c->error) {
    text_raw(&out, "dealloctrace: the leak census could not run: ");
    text_escaped(&out, c->error, strlen(c->error));
    text_raw(&out, "\n");
    return out.bytes;
  }
  uint64_t library, library_bytes;
  text_header(c, &out, &library, &library_bytes);
  size_t shown = 0;
  int library_header = 0;
  for (size_t k = 0; k < findings; k++) {
    const ch_group *g = &c->groups[order[k]];
    if (g->library && !library_header) {
      text_format(&out, "Library leaks (the toolchain's, not counted): %llu objects, %llu bytes\n\n",
                  library, library_bytes);
      library_header = 1;
    }
    if (shown == CH_CENSUS_FULL_FINDINGS) {
      text_format(&out, "    ... and %llu more findings (see the log's census record)\n\n",
                  findings - shown, 0);
      break;
    }
    uint64_t count, total;
    finding_totals(c, order[k], &count, &total);
    text_group(c, &out, g, count, total);
    shown++;
  }
  text_footer(c, &out);
  return out.bytes;
}

char *ch_census_render(ch_census *c, char **text) {
  int32_t *order = ch_bump_alloc(&c->bump, (c->group_count + 1) * sizeof(int32_t));
  type_total *table = ch_bump_alloc(&c->bump, tally_slots(c) * sizeof(type_total));
  if (order == NULL || table == NULL) {
    if (!c->error) c->error = "out of memory for the census's report";
    c->group_count = 0;
    static int32_t none[1];
    order = none;
  }
  size_t findings = c->error ? 0 : finding_order(c, order);
  char *json = render_json(c, order, findings, table);
  if (text) *text = render_text(c, order, findings);
  return json;
}
