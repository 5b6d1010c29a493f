// Names for the census's output: type names (cached; closure contexts and boxes named by
// their captures) and the field, element or capture a word of an object is.
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"

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

/// `name` with each `(unknown context at $55d0…)` (a private or local type's context, named
/// by an address that moves with ASLR) written `(unknown context)`: finding ids hash type
/// names, and must be the same in every run. Kept for the process's life, as closure names.
static const char *without_context_addresses(const char *name, size_t *length) {
  static const char opening[] = "(unknown context at $";
  const size_t opening_length = sizeof opening - 1;
  if (*length < opening_length || memmem(name, *length, opening, opening_length) == NULL) {
    return name;
  }
  char *kept = malloc(*length + 1);
  if (kept == NULL) return name;
  size_t used = 0;
  for (size_t i = 0; i < *length;) {
    if (*length - i >= opening_length && memcmp(name + i, opening, opening_length) == 0) {
      const char *close = memchr(name + i, ')', *length - i);
      if (close != NULL) {
        memcpy(kept + used, "(unknown context)", 17);
        used += 17;
        i = (size_t)(close - name) + 1;
        continue;
      }
    }
    kept[used++] = name[i++];
  }
  kept[used] = 0;
  *length = used;
  return kept;
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
  return without_context_addresses(ch_type_name(metadata, length), length);
}

uint32_t ch_census_edge_offset(ch_census *c, int32_t holder, int32_t target) {
  uintptr_t address = ch_census_address(c, holder), metadata = ch_census_metadata(c, holder);
  uint64_t size = ch_census_size(c, holder);
  uint64_t words[512];
  uint64_t header[4] = {0, 0, 0, 0};
  uintptr_t wanted = ch_census_address(c, target);
  // One read from the object's start: its header comes with its first words.
  for (uint64_t at = 0; at < size;) {
    size_t chunk = size - at < sizeof words ? size - at : sizeof words;
    size_t got = ch_read(words, address + at, chunk) & ~(size_t)7;
    if (got == 0) break;
    if (at == 0) memcpy(header, words, got < sizeof header ? got : sizeof header);
    for (size_t k = at == 0 ? 2 : 0; k < got / 8; k++) {
      if ((words[k] & SPARE_BITS_STRIPPED) != wanted) continue;
      ch_name name;
      ch_describe(metadata, header, at + k * 8, &name);
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
  ch_read(header, ch_census_address(c, row), sizeof header);
  ch_name name;
  ch_describe(ch_census_metadata(c, row), header, offset, &name);
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
