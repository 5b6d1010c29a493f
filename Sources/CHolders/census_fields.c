// Which stored properties of a class can hold no reference at all: those whose type is a
// plain number or an identity (`Int`, `UInt64`, `Double`, `Bool`, `ObjectIdentifier`, ...),
// read from the class's field descriptors (Swift ABI, the layouts naming.c lists).
//
// Why the census needs it: a word that equals an object's address is subtracted from that
// object's count as a reference. Some integers are addresses by design: a Dictionary's
// storage keeps a hash seed derived from its own address in `_seed`, which read as a
// reference made every dictionary a one-object cycle. A field whose type is a number owns
// nothing, whatever its value.
#define _GNU_SOURCE

#include <string.h>

#include "census.h"

static const char *relative_pointer(const void *field) {
  int32_t offset;
  memcpy(&offset, field, 4);
  return offset ? (const char *)field + offset : NULL;
}

static uint32_t read_u32(uintptr_t address) {
  uint32_t value;
  memcpy(&value, (const void *)address, 4);
  return value;
}

/// Whether a field's mangled type name is a standard-library number or identity type.
static int plain_value_type(const char *mangled) {
  static const char *const names[] = {
      "Si",        "Su",         "Sd",         "Sf",         "Sb",         "s4Int8V",
      "s5Int16V",  "s5Int32V",   "s5Int64V",   "s5UInt8V",   "s6UInt16V",  "s6UInt32V",
      "s6UInt64V", "s16ObjectIdentifierV",
  };
  if (mangled == NULL) return 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strcmp(mangled, names[i]) == 0) return 1;
  }
  return 0;
}

uint64_t ch_census_plain_fields(uintptr_t metadata, unsigned words) {
  uint64_t mask = 0;
  for (uintptr_t m = metadata; m; m = *(const uintptr_t *)(m + 8)) {
    uintptr_t kind = *(const uintptr_t *)m;
    if (kind != 0 && kind <= 0x7ff) break;  // not a class
    uintptr_t description = *(const uintptr_t *)(m + 40);
    if (description == 0) break;
    uint32_t flags = read_u32(description);
    if ((flags & 0x1f) != 16) break;  // not a class descriptor
    if (flags & (1u << (16 + 13))) break;  // resilient superclass: offsets not here
    const char *fields = relative_pointer((const void *)(description + 16));
    uint32_t field_count = read_u32(description + 36);
    uint32_t vector_offset = read_u32(description + 40);
    if (fields == NULL || field_count == 0) continue;
    const uint64_t *vector = (const uint64_t *)(m + (uintptr_t)vector_offset * 8);
    uint32_t record_size = *(const uint16_t *)(fields + 10);
    uint32_t records = read_u32((uintptr_t)fields + 12);
    if (records < field_count) field_count = records;
    for (uint32_t i = 0; i < field_count; i++) {
      const char *record = fields + 16 + (size_t)i * record_size;
      if (!plain_value_type(relative_pointer(record + 4))) continue;
      uint64_t offset = vector[i];
      if (offset < 16 || (offset & 7)) continue;
      uint64_t word = (offset - 16) / 8;
      if (word < words) mask |= 1ull << word;
    }
  }
  return mask;
}

int ch_census_array_of_references(uintptr_t metadata) {
  // The element type is the class's generic argument, after its immediate members.
  uintptr_t description = *(const uintptr_t *)(metadata + 40);
  if (description == 0 || (read_u32(description) & (1u << (16 + 13)))) return 0;
  uint32_t positive = read_u32(description + 28), immediate = read_u32(description + 32);
  if (positive <= immediate) return 0;
  uintptr_t element = *(const uintptr_t *)(metadata + (uintptr_t)(positive - immediate) * 8);
  if (element == 0) return 0;
  uintptr_t kind = *(const uintptr_t *)element;
  // A class (its kind word is 0 or an isa pointer), or a class-bound existential
  // (AnyObject: one word, kind 0x303).
  return kind == 0 || kind > 0x7ff || kind == 0x303;
}
