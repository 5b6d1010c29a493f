// Growth across checkpoints, in the recorder: for each checkpoint label, the live count of
// each type at its censuses so far, and for a type that rose at every one (three or more),
// one of its instances that was not there at the previous census, with its holder path.
//
// Why here and not in the report: only the process can tell which instance is new (its
// address was not among the type's at the previous census) and scan for what holds it. The
// addresses kept between censuses are those of types still rising at every census (the
// ones that can grow at the next), capped per label (GROWTH_ADDRESSES); a type past the cap
// gets an instance all the same, said to be of unknown age. Everything kept lives in tool
// memory (ch_map), never a root; labels past GROWTH_LABELS, and types past the
// GROWTH_TYPES most numerous of a census, are not followed.
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"

#define GROWTH_LABELS 16
#define GROWTH_LABEL_BYTES 128
#define GROWTH_TYPES 256
#define GROWTH_ADDRESSES 65536
#define CANDIDATE_SLOTS 512  // a power of two, twice GROWTH_TYPES

typedef struct {
  uintptr_t metadata;
  uint64_t count;
  int rising;  // rose at every census of the label so far
  int complete;  // every instance's address is in the list below
  uint32_t first, n;  // its addresses at the last census, ascending, in `addresses`
} growth_type;

typedef struct {
  char label[GROWTH_LABEL_BYTES];
  size_t label_length;
  uint32_t censuses;
  growth_type types[GROWTH_TYPES];
  size_t type_count;
  uintptr_t *addresses;  // GROWTH_ADDRESSES, ch_map'ed
  size_t address_count;
} growth_label;

static growth_label *labels;  // GROWTH_LABELS, ch_map'ed; used under the census lock
static size_t label_count;

/// The label's history, made on first use; NULL when GROWTH_LABELS are taken or memory ran
/// out. Labels longer than GROWTH_LABEL_BYTES are told apart by their start and length.
static growth_label *history_of(const char *label) {
  size_t length = strlen(label);
  size_t kept = length < GROWTH_LABEL_BYTES ? length : GROWTH_LABEL_BYTES;
  if (labels == NULL) labels = ch_map(GROWTH_LABELS * sizeof(growth_label));
  if (labels == NULL) return NULL;
  for (size_t i = 0; i < label_count; i++) {
    growth_label *l = &labels[i];
    if (l->label_length == length && memcmp(l->label, label, kept) == 0) return l;
  }
  if (label_count == GROWTH_LABELS) return NULL;
  growth_label *l = &labels[label_count];
  l->addresses = ch_map(GROWTH_ADDRESSES * sizeof(uintptr_t));
  if (l->addresses == NULL) return NULL;
  label_count++;
  memcpy(l->label, label, kept);
  l->label_length = length;
  return l;
}

static const growth_type *previous_of(const growth_label *l, uintptr_t metadata) {
  for (size_t i = 0; i < l->type_count; i++) {
    if (l->types[i].metadata == metadata) return &l->types[i];
  }
  return NULL;
}

static int was_there(const growth_label *l, const growth_type *previous, uintptr_t address) {
  const uintptr_t *list = l->addresses + previous->first;
  size_t low = sorted_rows_at_or_below(list, previous->n, sizeof *list, 0, sizeof *list, address);
  return low > 0 && list[low - 1] == address;
}

/// One instance of a growing type: the reachable one at the highest address that was not
/// there at the previous census (`known_new`), else (its addresses were not all kept) the
/// reachable one at the highest address not among those kept.
static void pick_instance(ch_census *c, const growth_label *l, const growth_type *previous,
                          ch_growth_pick *pick) {
  // The rows in address order, keeping the last match: the one at the highest address.
  ch_row_cursor rows;
  ch_row_cursor_at(&rows, c->rows, 0);
  for (size_t i = 0; i < c->row_count; i++) {
    uintptr_t address = ch_row_cursor_next(&rows);
    if ((c->flags[i] & (CF_VALID | CF_MARKED)) != (CF_VALID | CF_MARKED)) continue;
    if (ch_census_metadata(c, (int32_t)i) != pick->metadata) continue;
    if (was_there(l, previous, address)) continue;
    pick->address = address;
    pick->known_new = previous->complete;
  }
}

/// Keeps, for the next census, the addresses of the types in `next` still rising at every
/// census (one pass over the rows, a small table of those types by metadata).
static void keep_addresses(ch_census *c, growth_label *l, growth_type *next, size_t count) {
  int16_t slot_of[CANDIDATE_SLOTS];
  memset(slot_of, 0xff, sizeof slot_of);
  size_t room = GROWTH_ADDRESSES, used = 0;
  for (size_t t = 0; t < count; t++) {
    growth_type *type = &next[t];
    type->complete = type->rising && l->censuses >= 2 && type->count <= room;
    type->first = (uint32_t)used;
    type->n = 0;
    if (!type->complete) continue;
    room -= type->count;
    used += type->count;
    size_t s = (size_t)((type->metadata >> 3) * 0x9E3779B97F4A7C15ull >> 55) & (CANDIDATE_SLOTS - 1);
    while (slot_of[s] >= 0) s = (s + 1) & (CANDIDATE_SLOTS - 1);
    slot_of[s] = (int16_t)t;
  }
  if (used == 0) return;
  ch_row_cursor rows;
  ch_row_cursor_at(&rows, c->rows, 0);
  for (size_t i = 0; i < c->row_count; i++) {
    uintptr_t address = ch_row_cursor_next(&rows);
    if (!(c->flags[i] & CF_VALID)) continue;
    uintptr_t metadata = ch_census_metadata(c, (int32_t)i);
    size_t s = (size_t)((metadata >> 3) * 0x9E3779B97F4A7C15ull >> 55) & (CANDIDATE_SLOTS - 1);
    while (slot_of[s] >= 0 && next[slot_of[s]].metadata != metadata) {
      s = (s + 1) & (CANDIDATE_SLOTS - 1);
    }
    if (slot_of[s] < 0) continue;
    growth_type *type = &next[slot_of[s]];
    if (type->n < type->count) l->addresses[type->first + type->n++] = address;
  }
}

void ch_census_growth(ch_census *c, const ch_type_count *live, size_t types) {
  c->pick_count = 0;
  if (c->error || c->label[0] == 0) return;
  growth_label *l = history_of(c->label);
  if (l == NULL) return;
  l->censuses++;
  size_t count = types < GROWTH_TYPES ? types : GROWTH_TYPES;
  growth_type next[GROWTH_TYPES];
  for (size_t t = 0; t < count; t++) {
    const growth_type *previous = previous_of(l, live[t].metadata);
    next[t] = (growth_type){live[t].metadata, live[t].count, 1, 0, 0, 0};
    if (l->censuses == 1) continue;
    // A type the previous census did not list had none (or too few to be listed).
    next[t].rising = previous ? previous->rising && live[t].count > previous->count
                              : l->censuses == 2;
    if (l->censuses < 3 || !next[t].rising || previous == NULL) continue;
    if (c->pick_count == CH_GROWTH_PICKS) continue;
    ch_growth_pick *pick = &c->picks[c->pick_count++];
    *pick = (ch_growth_pick){live[t].metadata, 0, 0, previous->count, live[t].count, NULL, 0};
    pick->name = ch_census_type_name(pick->metadata, &pick->name_length);
    pick_instance(c, l, previous, pick);
  }
  keep_addresses(c, l, next, count);
  memcpy(l->types, next, count * sizeof next[0]);
  l->type_count = count;
}

/// One element of `growing`: the type, its last two counts, the instance and its holders
/// (the holder scan's HOLDERS-VALUE, or null when the instance went meanwhile).
static void growth_element(ch_json *out, const ch_growth_pick *pick) {
  ch_json_raw(out, "{\"type\":");
  ch_json_string(out, pick->name, pick->name_length);
  ch_json_raw(out, ",\"previous\":");
  ch_json_int(out, (int64_t)pick->previous_count);
  ch_json_raw(out, ",\"count\":");
  ch_json_int(out, (int64_t)pick->count);
  if (pick->address == 0) {
    ch_json_raw(out, ",\"obj\":null}");
    return;
  }
  ch_json_raw(out, ",\"obj\":");
  ch_json_hex(out, pick->address);
  ch_json_raw(out, pick->known_new ? ",\"new\":true" : ",\"new\":false");
  cholders_scan_result *scan = cholders_scan(&pick->address, 1, 6, 1, 0);
  ch_json_raw(out, ",\"holders\":");
  ch_json_holders(out, scan ? &scan->targets[0] : NULL);
  cholders_scan_free(scan);
  ch_json_raw(out, "}");
}

char *ch_census_growth_json(char *json, const ch_census *c) {
  if (json == NULL || c->pick_count == 0) return json;
  ch_json out = {NULL, 0, 0, 0};
  ch_json_raw(&out, json);
  ch_json_raw(&out, ",\"growing\":[");
  for (size_t i = 0; i < c->pick_count; i++) {
    if (i) ch_json_raw(&out, ",");
    growth_element(&out, &c->picks[i]);
  }
  ch_json_raw(&out, "]");
  if (out.failed) {
    free(out.bytes);
    return json;
  }
  free(json);
  return out.bytes;
}
