// What each word of a Swift object means to the census: which words own what they point at
// (a class's stored properties, an array's elements, a closure's captures), from the type's
// metadata, once per type and cached for the census.
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"


static word_rule *rule_slot(rules *r, uintptr_t metadata) {
  uint32_t slot = (uint32_t)(((metadata >> 3) * 0x9E3779B97F4A7C15ull) >> 48);
  for (uint32_t probes = 0; probes < TYPE_SLOTS; probes++) {
    word_rule *rule = &r->slots[slot];
    if (rule->metadata == metadata || rule->metadata == 0) return rule;
    slot = (slot + 1) & (TYPE_SLOTS - 1);
  }
  return NULL;
}

const word_rule *ch_census_rule_of(rules *r, uintptr_t metadata) {
  static const word_rule owning = {0, WORDS_OWNING, 0, 0, 0, 0, 0};
  word_rule *rule = rule_slot(r, metadata);
  if (rule == NULL) return &owning;
  if (rule->metadata == metadata) return rule;
  rule->metadata = metadata;
  r->count++;
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
