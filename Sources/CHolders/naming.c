// Naming a word inside a Swift heap object from the runtime's own metadata (Swift ABI:
// docs/ABI/TypeMetadata.rst, include/swift/ABI/Metadata.h): the stored property of a class
// (inherited ones too), the element of an array storage, or what a closure context
// captures.
//
// Why metadata and not guesses: field offsets differ between -Onone and -O, between
// generic instantiations, and with resilient superclasses; the field-offset vector in the
// class metadata is what the compiled code itself uses. All reads here are of metadata and
// descriptors, which the runtime never frees. Layouts assumed (64-bit, no Objective-C
// interop): class metadata: superclass +8, instance size +24 (u32), description +40;
// class descriptor: flags +0, fields +16 (relative), metadata positive size +28, immediate
// members +32, field count +36, field-offset-vector offset +40 (words); field descriptor:
// record size +10 (u16), count +12, records from +16 (flags, type, name; relative);
// HeapLocalVariable metadata: kind 0x400, capture descriptor +16 (counts, then one relative
// mangled type name per capture); HeapGenericLocalVariable (a runtime box): kind 0x500,
// boxed type +16; value witness table: stride +72, flags +80.
#define _GNU_SOURCE

#include <stdbool.h>
#include <string.h>

#include "internal.h"

typedef struct {
  const char *data;
  uintptr_t length;
} type_name_pair;

extern type_name_pair swift_getTypeName(const void *metadata, bool qualified)
    __attribute__((swiftcall));
extern const void *swift_getTypeByMangledNameInContext(const char *name, size_t length,
                                                        const void *context,
                                                        const void *const *generic_args)
    __attribute__((swiftcall));

static const char *relative(const void *field) {
  int32_t offset;
  memcpy(&offset, field, 4);
  return offset ? (const char *)field + offset : NULL;
}

static uint32_t u32(uintptr_t address) {
  uint32_t value;
  memcpy(&value, (const void *)address, 4);
  return value;
}
static uintptr_t word(uintptr_t address) { return *(const uintptr_t *)address; }

const char *ch_type_name(uintptr_t metadata, size_t *length) {
  type_name_pair pair = swift_getTypeName((const void *)metadata, true);
  *length = pair.data ? pair.length : 0;
  return pair.data ? pair.data : "";
}

/// A mangled name's length: symbolic references (0x01-0x17: 4 bytes, 0x18-0x1f: 8 bytes)
/// may contain zero bytes.
static size_t mangled_length(const char *name) {
  size_t i = 0;
  for (;;) {
    unsigned char c = (unsigned char)name[i];
    if (c == 0) return i;
    if (c >= 0x01 && c <= 0x17) {
      i += 5;
    } else if (c >= 0x18 && c <= 0x1f) {
      i += 9;
    } else {
      i++;
    }
  }
}

/// unowned / unowned(unsafe) storage (mangling suffix Xo / Xu): such a word does not keep
/// the object alive, so it is no holder.
static int non_owning(const char *mangled) {
  if (mangled == NULL) return 0;
  size_t n = mangled_length(mangled);
  return n >= 2 && mangled[n - 2] == 'X' && (mangled[n - 1] == 'o' || mangled[n - 1] == 'u');
}

static void describe_class_field(uintptr_t metadata, uint64_t offset, ch_name *name) {
  uint32_t instance_size = u32(metadata + 24);
  if (offset >= instance_size) return;  // tail-allocated storage: unnamed
  uint64_t best_offset = 0;
  const char *best_name = NULL, *best_type = NULL;
  for (uintptr_t m = metadata; m; m = word(m + 8)) {
    uintptr_t description = word(m + 40);
    if (description == 0) break;
    uint32_t flags = u32(description);
    if ((flags & 0x1f) != 16) break;  // not a class descriptor
    const char *fields = relative((const void *)(description + 16));
    uint32_t field_count = u32(description + 36);
    uint32_t vector_offset = u32(description + 40);
    if (fields == NULL || field_count == 0) continue;
    uintptr_t vector = m + (uintptr_t)vector_offset * 8;
    if (flags & (1u << (16 + 13))) {
      // Resilient superclass: the vector offset counts from this class's immediate
      // members, whose start the runtime stores in the class's metadata bounds.
      const char *bounds = relative((const void *)(description + 24));
      if (bounds == NULL) continue;
      vector = m + (uintptr_t)(*(const intptr_t *)bounds) + (uintptr_t)vector_offset * 8;
    }
    uint32_t record_size = *(const uint16_t *)(fields + 10);
    uint32_t records = u32((uintptr_t)fields + 12);
    if (records < field_count) field_count = records;
    for (uint32_t i = 0; i < field_count; i++) {
      uint64_t field_offset = ((const uint64_t *)vector)[i];
      if (field_offset > offset || (best_name && field_offset < best_offset)) continue;
      const char *record = fields + 16 + (size_t)i * record_size;
      best_offset = field_offset;
      best_type = relative(record + 4);
      best_name = relative(record + 8);
    }
  }
  if (best_name == NULL) return;
  if (non_owning(best_type)) {
    name->edge = CH_EDGE_STALE;
    return;
  }
  name->edge = CH_EDGE_FIELD;
  name->field = best_name;
  name->field_length = strlen(best_name);
}

/// The element type's stride and alignment of a `_ContiguousArrayStorage<Element>`, from
/// its generic argument (after the class's immediate members).
static void element_layout(uintptr_t metadata, uint64_t *stride, uint64_t *alignment) {
  *stride = 8;
  *alignment = 8;
  uintptr_t description = word(metadata + 40);
  if (description == 0 || (u32(description) & (1u << (16 + 13)))) return;
  uint32_t positive = u32(description + 28), immediate = u32(description + 32);
  if (positive <= immediate) return;
  uintptr_t element = word(metadata + (uintptr_t)(positive - immediate) * 8);
  if (element == 0) return;
  uintptr_t witnesses = word(element - 8);
  if (witnesses == 0) return;
  uint64_t s = word(witnesses + 72);
  uint32_t flags = u32(witnesses + 80);
  if (s > 0) *stride = s;
  *alignment = (uint64_t)(flags & 0xff) + 1;
}

extern char *swift_demangle(const char *mangled, size_t length, char *out_buffer,
                            size_t *out_buffer_size, uint32_t flags);

/// A capture's type name without asking the runtime to build metadata: the demangled text
/// of a plain mangled name (no symbolic references), kept in a small per-scan ring.
static const char *demangled_capture(const char *mangled, size_t *length) {
  static char ring[16][256];
  static unsigned next;
  size_t n = mangled_length(mangled);
  if (n == 0 || n > 200) return NULL;
  for (size_t i = 0; i < n; i++) {
    if ((unsigned char)mangled[i] < 0x20) return NULL;  // a symbolic reference
  }
  char symbol[208];
  memcpy(symbol, "$s", 2);
  memcpy(symbol + 2, mangled, n);
  symbol[n + 2] = 'D';  // "type mangling" suffix
  char *slot = ring[next++ % 16];
  size_t capacity = sizeof ring[0];
  char *text = swift_demangle(symbol, n + 3, slot, &capacity, 0);
  if (text == NULL) return NULL;
  *length = strnlen(text, sizeof ring[0]);
  return text;
}

static void describe_captures(uintptr_t metadata, ch_name *name) {
  name->edge = CH_EDGE_CAPTURES;
  name->capture_count = 0;
  uintptr_t descriptor = word(metadata + 16);
  if (descriptor == 0) return;
  uint32_t count = u32(descriptor);
  // A generic closure keeps its type arguments in the context (metadata sources); its
  // capture types mention generic parameters that cannot be resolved without them, so
  // those are only demangled, never handed to the runtime.
  int generic = u32(descriptor + 4) != 0 || u32(descriptor + 8) != 0;
  for (uint32_t i = 0; i < count && name->capture_count < 16; i++) {
    const char *mangled = relative((const void *)(descriptor + 12 + (uintptr_t)i * 4));
    const char *text = NULL;
    size_t text_length = 0;
    if (mangled && !generic) {
      const void *type = swift_getTypeByMangledNameInContext(mangled, mangled_length(mangled),
                                                              NULL, NULL);
      if (type) text = ch_type_name((uintptr_t)type, &text_length);
    }
    if (text == NULL && mangled) text = demangled_capture(mangled, &text_length);
    if (text == NULL) {
      text = "?";
      text_length = 1;
    }
    name->captures[name->capture_count] = text;
    name->capture_lengths[name->capture_count] = text_length;
    name->capture_count++;
  }
}

void ch_describe(uintptr_t metadata, const uint64_t *header, uint64_t word_offset,
                 ch_name *name) {
  memset(name, 0, sizeof *name);
  uintptr_t kind = word(metadata);
  if (kind == 0x400) {
    name->type = "closure context";
    name->type_length = 15;
    describe_captures(metadata, name);
    return;
  }
  if (kind == 0x500) {
    // A runtime-made box (swift_allocBox): its boxed type sits at +16.
    name->type = "box";
    name->type_length = 3;
    uintptr_t boxed = word(metadata + 16);
    name->edge = CH_EDGE_CAPTURES;
    if (boxed) {
      name->captures[0] = ch_type_name(boxed, &name->capture_lengths[0]);
      name->capture_count = 1;
    }
    return;
  }
  if (kind != 0 && kind <= 0x7ff) {
    name->type = "heap object";
    name->type_length = 11;
    return;
  }
  name->type = ch_type_name(metadata, &name->type_length);
  static const char array_prefix[] = "Swift._ContiguousArrayStorage<";
  if (name->type_length > sizeof array_prefix - 1 &&
      memcmp(name->type, array_prefix, sizeof array_prefix - 1) == 0) {
    uint64_t stride, alignment;
    element_layout(metadata, &stride, &alignment);
    uint64_t start = (32 + alignment - 1) & ~(alignment - 1);
    int64_t count = (int64_t)header[2];
    if (word_offset < start) return;
    uint64_t index = (word_offset - start) / stride;
    if (count < 0 || index >= (uint64_t)count) {
      name->edge = CH_EDGE_STALE;  // a slot past the count: left over, holds nothing
      return;
    }
    name->edge = CH_EDGE_ELEMENT;
    name->element = (int64_t)index;
    name->count = count;
    return;
  }
  describe_class_field(metadata, word_offset, name);
}
