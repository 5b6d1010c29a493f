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

#include <pthread.h>
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

// ---- whether a type's image is still loaded ----------------------------------------------
// An object outlives the image that defined its class when a plugin is dlclose'd while one
// of its objects is alive: the object's metadata pointer (or its descriptor, for a generic
// class the runtime instantiated in its own memory) then points into unmapped memory, and
// reading it (here or in swift_getTypeName) faults. So before anything reads a type's
// metadata, the words that naming reads through are probed with ch_read, which reports an
// unmapped page instead of faulting: the metadata, its nominal type descriptor, every
// superclass and its descriptor, the generic arguments (recursively, to MAX_TYPE_DEPTH),
// a closure context's capture descriptor and the descriptors its captured types refer to,
// a box's boxed type. An image is mapped or
// unmapped as a whole, so one readable word of each stands for the rest. The trade-off: a
// few system calls per type, once per scan (a verdict cache), and a type nested deeper than
// MAX_TYPE_DEPTH is not named either. An image unloaded during the scan itself is not
// covered (dlclose racing with a scan).

#define MAX_TYPE_DEPTH 6
#define MAX_SUPERCLASSES 64
#define LOADED_CACHE 256

static struct {
  uintptr_t metadata;
  int loaded;
} loaded_cache[LOADED_CACHE];

void ch_naming_begin_scan(void) { memset(loaded_cache, 0, sizeof loaded_cache); }

static int readable(uintptr_t address, void *out, size_t length) {
  return address != 0 && ch_read(out, address, length) == length;
}

static int type_loaded(uintptr_t metadata, int depth);

/// Whether the generic arguments of a type whose descriptor is `description` (generic header
/// at `header`) and whose arguments start at `arguments` are loaded types.
static int arguments_loaded(uintptr_t header, uintptr_t arguments, int depth) {
  // TypeGenericContextDescriptorHeader: two relative pointers, then NumParams,
  // NumRequirements, NumKeyArguments, flags (u16 each); then one byte per parameter.
  uint16_t counts[4];
  if (!readable(header + 8, counts, sizeof counts)) return 0;
  uint16_t params = counts[0];
  uint8_t kinds[64];
  if (params > sizeof kinds || !readable(header + 16, kinds, params)) return 0;
  size_t key = 0;
  for (uint16_t i = 0; i < params; i++) {
    if (!(kinds[i] & 0x80)) continue;  // no key argument for this parameter
    uintptr_t argument;
    if (!readable(arguments + key * 8, &argument, 8)) return 0;
    key++;
    // Kind 0: a type parameter, whose argument is a metadata pointer (a pack's is not).
    if ((kinds[i] & 0x3f) == 0 && !type_loaded(argument, depth + 1)) return 0;
  }
  return 1;
}

/// Whether a nominal type descriptor at `description` is readable and, when generic, the
/// arguments of the metadata that uses it are loaded too.
static int descriptor_loaded(uintptr_t description, uintptr_t arguments, uint32_t header_offset,
                             int depth) {
  uint32_t flags;
  if (!readable(description, &flags, 4)) return 0;
  if (!(flags & 0x80) || arguments == 0) return 1;  // not generic
  return arguments_loaded(description + header_offset, arguments, depth);
}

static int type_loaded(uintptr_t metadata, int depth) {
  if (depth > MAX_TYPE_DEPTH) return 0;
  uintptr_t words[6];
  if (!readable(metadata, words, sizeof words)) return 0;
  uintptr_t kind = words[0];
  if (kind == 0x400) {
    uint32_t counts[3];
    return readable(words[2], counts, sizeof counts);  // the capture descriptor
  }
  if (kind == 0x500) return type_loaded(words[2], depth + 1);  // the boxed type
  if (kind == 0x200 || kind == 0x201 || kind == 0x202) {
    // Struct, enum, Optional: descriptor at +8, generic arguments from +16; the descriptor's
    // generic header follows its 28 bytes of fields.
    return descriptor_loaded(words[1], metadata + 16, 28, depth);
  }
  if (kind != 0 && kind <= 0x7ff) return 1;  // other kinds: nothing more is read through them
  // A class, then its superclasses: descriptor at +40, generic arguments after the class's
  // immediate members (positive size - immediate members, in words), the descriptor's
  // generic header after its 44 bytes of fields.
  int chain = 0;
  for (uintptr_t m = metadata; m != 0;) {
    uintptr_t class_words[6];
    if (!readable(m, class_words, sizeof class_words)) return 0;
    uintptr_t description = class_words[5];
    if (description == 0) return 1;  // an Objective-C-style root: nothing read through it
    uint32_t fields[11];
    if (!readable(description, fields, sizeof fields)) return 0;
    int generic = (fields[0] & 0x80) != 0;
    int resilient = (fields[0] & (1u << (16 + 13))) != 0;
    if (generic && !resilient && fields[7] > fields[8]) {
      uintptr_t arguments = m + (uintptr_t)(fields[7] - fields[8]) * 8;
      if (!arguments_loaded(description + 44, arguments, depth)) return 0;
    }
    m = class_words[1];  // the superclass
    if (++chain > MAX_SUPERCLASSES) return 0;
  }
  return 1;
}

int ch_type_loaded(uintptr_t metadata) {
  size_t slot = (size_t)((metadata >> 3) * 0x9E3779B97F4A7C15ull >> 56) % LOADED_CACHE;
  if (loaded_cache[slot].metadata == metadata && metadata != 0) return loaded_cache[slot].loaded;
  int loaded = type_loaded(metadata, 0);
  loaded_cache[slot].metadata = metadata;
  loaded_cache[slot].loaded = loaded;
  return loaded;
}

// ---- naming ------------------------------------------------------------------------------

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

/// Whether every symbolic reference in a mangled name points at readable memory (a captured
/// type may be another image's): direct (0x01) and indirect (0x02) context references are
/// followed; any other kind is not resolved at all.
static int references_loaded(const char *mangled) {
  for (size_t i = 0;;) {
    unsigned char c = (unsigned char)mangled[i];
    if (c == 0) return 1;
    if (c >= 0x18 && c <= 0x1f) return 0;
    if (c < 0x01 || c > 0x17) {
      i++;
      continue;
    }
    if (c != 0x01 && c != 0x02) return 0;
    uintptr_t target = (uintptr_t)relative(mangled + i + 1);
    if (c == 0x02 && !readable(target, &target, 8)) return 0;
    uint32_t flags;
    if (!readable(target, &flags, 4)) return 0;
    i += 5;
  }
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
  if (count > CH_MAX_CAPTURES) name->more_captures = (int)(count - CH_MAX_CAPTURES);
  for (uint32_t i = 0; i < count && name->capture_count < CH_MAX_CAPTURES; i++) {
    const char *mangled = relative((const void *)(descriptor + 12 + (uintptr_t)i * 4));
    const char *text = NULL;
    size_t text_length = 0;
    if (mangled && !generic && references_loaded(mangled)) {
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

/// Held while naming calls into the Swift runtime (swift_getTypeName and the mangled-name
/// lookup take the runtime's own locks, which have no fork handlers): the fork handler takes
/// it, so that no fork happens while a scan holds one of those locks, which a forked child's
/// first scan would then wait for forever. Held for one description, microseconds.
static pthread_mutex_t naming_lock = PTHREAD_MUTEX_INITIALIZER;

void ch_naming_fork_prepare(void) { pthread_mutex_lock(&naming_lock); }
void ch_naming_fork_parent(void) { pthread_mutex_unlock(&naming_lock); }
void ch_naming_fork_child(void) { pthread_mutex_init(&naming_lock, NULL); }

static void describe(uintptr_t metadata, const uint64_t *header, uint64_t word_offset,
                     ch_name *name);

void ch_describe(uintptr_t metadata, const uint64_t *header, uint64_t word_offset,
                 ch_name *name) {
  pthread_mutex_lock(&naming_lock);
  describe(metadata, header, word_offset, name);
  pthread_mutex_unlock(&naming_lock);
}

static void describe(uintptr_t metadata, const uint64_t *header, uint64_t word_offset,
                     ch_name *name) {
  memset(name, 0, sizeof *name);
  if (!ch_type_loaded(metadata)) {
    name->type = CH_UNLOADED_TYPE;
    name->type_length = sizeof CH_UNLOADED_TYPE - 1;
    return;
  }
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
