// Shared declarations of the CHolders files (not part of the public header).
#ifndef CHOLDERS_INTERNAL_H
#define CHOLDERS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "CHolders.h"
#include "sorted_rows.h"

// ---- refcounts.c: the runtime's refcount layout ----------------------------------------
// The inline refcount word at object + 8 on 64-bit targets (swift/RefCount.h): strong extra
// count in bits 33-62, deiniting bit 32, UseSlowRC bit 63. With UseSlowRC set, the word is
// either immortal (its low 32 bits all set) or the side table's address shifted right by 3
// (bits 0-61). The side table (HeapObjectSideTableEntry) starts with a pointer back at its
// object, then its refcount word (16-byte aligned, so at +16) in the same layout.
#define CH_RC_ONE_STRONG (1ull << 33)
#define CH_RC_DEINITING (1ull << 32)
#define CH_RC_STRONG_EXTRA(bits) (((bits) >> 33) & 0x3fffffffu)
#define CH_RC_SLOW(bits) ((bits) >> 63)
#define CH_RC_IMMORTAL(bits) (CH_RC_SLOW(bits) && (uint32_t)(bits) == 0xffffffffu)
#define CH_RC_SIDE_TABLE(bits) (((bits) & ((1ull << 62) - 1)) << 3)
#define CH_SIDE_TABLE_REFCOUNTS 16
/// Whether `word_address` is the first word of the side table of the object whose inline
/// refcount word is `bits`: the runtime's pointer back at its object, which owns nothing.
static inline int ch_is_side_table_word(uint64_t bits, uintptr_t word_address) {
  return CH_RC_SLOW(bits) && !CH_RC_IMMORTAL(bits) && CH_RC_SIDE_TABLE(bits) == word_address;
}
/// The strong reference count of the live object at `object`, read without ever faulting
/// (ch_read), from its inline word or its side table; -1 when it cannot be known (immortal,
/// deiniting, unreadable, or a side table that does not point back at the object).
int64_t ch_strong_count(uintptr_t object);

// ---- arena.c: the tool's own memory ------------------------------------------------------
// Everything the tool keeps (registry tables, scan snapshots, queues, symbol caches) lives in
// mmap'ed regions listed here, so the scan can leave them out: a word in tool memory that
// equals an object's address must never be reported as a holder.

/// Maps `size` bytes (rounded up to pages) and records the range as tool memory.
void *ch_map(size_t size);
/// Unmaps a region from ch_map (never used for code).
void ch_unmap(void *start, size_t size);
/// Copies the tool's ranges (unsorted) into starts/ends; returns how many were copied.
size_t ch_excluded_ranges(uintptr_t *starts, uintptr_t *ends, size_t capacity);

/// A bump allocator over ch_map chunks; reset drops everything at once.
typedef struct ch_bump {
  struct ch_bump_chunk *chunks;
} ch_bump;
void *ch_bump_alloc(ch_bump *bump, size_t size);
void ch_bump_reset(ch_bump *bump);
/// The bytes of [start, start + size) in memory now: the whole pages of its own that this
/// process wrote (what its RSS counts), from /proc/self/pagemap; 0 when that cannot be read.
size_t ch_resident_bytes(const void *start, size_t size);
/// The bytes of the bump's chunks in memory now: what using it cost, whatever it reserved.
size_t ch_bump_resident(const ch_bump *bump);

// ---- registry.c --------------------------------------------------------------------------
/// One snapshot row: the registry gives the address; the scan fills in the metadata and
/// the extent from the memory it reads (0 until then, and for an object that fails that).
typedef struct {
  uintptr_t address;
  uintptr_t metadata;
  uint64_t size;
} ch_entry;

#define CH_REGISTRY_GRANULE_SHIFT 4  // objects are 16-byte aligned: one bit per 16 bytes
#define CH_REGISTRY_SPAN_SHIFT 26  // each bitmap covers 64 MiB
#define CH_REGISTRY_BITMAP_WORDS \
  ((1ull << (CH_REGISTRY_SPAN_SHIFT - CH_REGISTRY_GRANULE_SHIFT)) / 64)
/// Maps the registry's tables; 0 when memory ran out.
int ch_registry_start(void);
void ch_registry_insert(uintptr_t address);
void ch_registry_remove(uintptr_t address);
/// Remembers a metadata pointer that an allocation used (lock-free, idempotent).
void ch_metadata_note(uintptr_t metadata);
/// Whether an allocation used `metadata`: a header holding it is a live object's.
int ch_metadata_known(uintptr_t metadata);
/// How many objects are registered now, counted over the same spans a snapshot walks.
uint64_t ch_registry_count(void);
/// How a snapshot went.
typedef struct {
  int incomplete;  // memory ran out: bits set in the registry were left out of the rows
  int spans_walked;  // the registry lists fewer spans than it has: every span was walked
  int grown;  // times the rows outgrew the count's room and moved (objects made meanwhile)
} ch_snapshot_status;
/// Copies all registered addresses into `bump` memory, ascending, and returns the count.
///
/// The contract: the rows are every object registered when the walk passed its address,
/// whatever the number of spans (past the list's capacity, the walk visits every span); an
/// object registered or removed during the copy may or may not be in it. Never shorter
/// than that without saying so: when memory runs out midway, `status->incomplete` is set
/// and the rows copied so far are returned. `status` may be NULL.
size_t ch_registry_snapshot_status(ch_bump *bump, ch_entry **out, ch_snapshot_status *status);
/// The same, all or nothing: 0 with *out NULL when memory ran out (or the registry never
/// started); an empty registry gives 0 with *out non-NULL.
size_t ch_registry_snapshot(ch_bump *bump, ch_entry **out);
/// The spans with a bitmap, ascending; all of them when the list overflowed (a span
/// installed meanwhile may be missing: its objects are newer than the caller's question).
/// 0 with *out NULL when memory ran out.
size_t ch_registry_sorted_spans(ch_bump *bump, uint32_t **out);
/// The bitmap of `span` (CH_REGISTRY_BITMAP_WORDS words, bit i of word w for the object at
/// (span << CH_REGISTRY_SPAN_SHIFT) + (64 w + i) * 16), or NULL when none ever lived there.
const uint64_t *ch_registry_bitmap(uint32_t span);
/// The registry's own memory in use now (its tables' and bitmaps' pages written).
uint64_t ch_registry_resident(void);
/// 1 once more spans were installed than the registry lists: counts and snapshots then
/// walk every span.
int ch_registry_spans_unlisted(void);

// ---- elf.c -------------------------------------------------------------------------------
/// Value (relative to the load base) of the data (or, with `function`, code) symbol `name`
/// in the ELF file at `path` (.symtab first, then .dynsym), or 0.
uintptr_t ch_elf_symbol_value(const char *path, const char *name, int function);
/// The data object symbol (STT_OBJECT) covering `relative` in the ELF file at `path`, or
/// NULL. The returned name is mangled and lives as long as the process.
const char *ch_elf_object_symbol(const char *path, uintptr_t relative);

// ---- maps.c ------------------------------------------------------------------------------
/// The largest single writable mapping a scan reads (64 GiB): larger ones are reserved
/// address space, not a heap (maps.c).
#define CH_LARGEST_SCANNED_MAPPING ((uintptr_t)64 << 30)
enum { CH_REGION_DATA = 1, CH_REGION_STACK = 2, CH_REGION_HEAP = 3 };
typedef struct {
  uintptr_t start, end;
  int kind;
  int64_t tid;  // stacks: the thread whose stack pointer is inside, or -1
  const char *module;  // data: the loaded object's path (NULL when unknown)
  uintptr_t module_base;
  // heap: the glibc malloc heap mapping this region lies in (arena 1: `[heap]`, the main
  // arena; 2: an anonymous mapping at a 64 MiB boundary, maybe a thread arena's heap), else 0
  uintptr_t arena_start, arena_end;
  int arena;
} ch_region;
/// The private writable mappings worth scanning, sorted, minus tool memory, [vvar],
/// [vsyscall], the mapping that holds `own_stack` and, under AddressSanitizer, its shadow
/// and the calling thread's fake stack (asan.c). Returns the count; `incomplete` is
/// set when memory ran out before every mapping was listed (the scan then fails).
size_t ch_regions(ch_bump *bump, ch_region **out, uintptr_t own_stack, int *incomplete);
/// Reads [remote, remote+length) into `local` without ever faulting. Returns the bytes read
/// (a short count stops at the first unreadable page).
size_t ch_read(void *local, uintptr_t remote, size_t length);
/// 1 once ch_read reads through /proc/self/mem (process_vm_readv was refused).
int ch_read_through_proc_mem(void);

// ---- heap.c ------------------------------------------------------------------------------
/// Learns glibc's tcache key (malloc + free of a probe chunk), once per process; call with
/// the scan lock held, outside any hook.
void ch_malloc_learn_key(void);
/// Walks the chunks of a glibc heap mapping [start, end) (`main_arena`: the `[heap]`
/// mapping; else a thread arena's heap, whose header is checked first) and returns in `out` (bump
/// memory) the sorted, disjoint [start, end) pairs of memory in free chunks; `count` pairs.
/// 0 when the heap does not read as glibc's (then nothing is known free in it).
int ch_malloc_free_ranges(ch_bump *bump, uintptr_t start, uintptr_t end, int main_arena,
                          uintptr_t **out, size_t *count);
/// Whether `address` lies in one of the `count` ranges from ch_malloc_free_ranges.
int ch_malloc_is_free(const uintptr_t *ranges, size_t count, uintptr_t address);

// ---- asan.c: under AddressSanitizer -------------------------------------------------------
/// Finds AddressSanitizer's runtime entry points (call once, from enabling holders): 1 when
/// the process runs under ASan and every one was found, 0 without ASan, -1 when ASan is
/// there but an entry point is missing (then holders refuse).
int ch_asan_start(void);
/// 1 once ch_asan_start found ASan: the scan asks it instead of glibc's chunk headers.
int ch_asan_on(void);
/// The size of the live ASan heap block that starts exactly at `address`, or 0.
uint64_t ch_asan_block_size(uintptr_t address);
/// Whether ASan has poisoned the byte at `address` (a freed block, a redzone, a header).
int ch_asan_poisoned(uintptr_t address);
/// The calling thread's ASan fake stack (an address in its mapping), or 0.
uintptr_t ch_asan_own_fake_stack(void);
/// ASan's shadow memory, [start, end); 0 without ASan.
int ch_asan_shadow(uintptr_t *start, uintptr_t *end);

// ---- naming.c ----------------------------------------------------------------------------
/// What a word at `offset` inside the object at `address` with `metadata` is.
enum { CH_EDGE_NONE = 0, CH_EDGE_FIELD, CH_EDGE_ELEMENT, CH_EDGE_CAPTURES, CH_EDGE_STALE };
/// The most captures of a closure context named in a step (the rest are counted).
#define CH_MAX_CAPTURES 16
typedef struct {
  const char *type;  // fully qualified type name, or "closure context" / "box"
  size_t type_length;
  int edge;
  const char *field;  // CH_EDGE_FIELD
  size_t field_length;
  int64_t element, count;  // CH_EDGE_ELEMENT
  int capture_count;  // CH_EDGE_CAPTURES: the first CH_MAX_CAPTURES named
  int more_captures;  // captures past those (counted, not named)
  const char *captures[CH_MAX_CAPTURES];
  size_t capture_lengths[CH_MAX_CAPTURES];
} ch_name;
/// The type name given to an object whose type's image is no longer loaded (its metadata
/// or descriptor unmapped: a dlclose'd plugin's object); nothing is read through it.
#define CH_UNLOADED_TYPE "an object of an unloaded image"
/// Forgets the previous scan's verdicts of ch_type_loaded (an image may have gone since).
void ch_naming_begin_scan(void);
/// Whether the metadata, descriptors and generic arguments that naming reads through for
/// the type at `metadata` are mapped (probed without faulting; cached until the next scan).
int ch_type_loaded(uintptr_t metadata);
/// `header` holds the object's first 32 bytes and `word_offset` the word's offset; the
/// array count is read from header[2]. Never reads object memory beyond `header`, and
/// never reads through a type whose image is unloaded (CH_UNLOADED_TYPE).
void ch_describe(uintptr_t metadata, const uint64_t *header, uint64_t word_offset,
                 ch_name *name);
/// A Swift type's qualified name (runtime cache; never freed).
const char *ch_type_name(uintptr_t metadata, size_t *length);

// ---- json.c ------------------------------------------------------------------------------
typedef struct {
  char *bytes;
  size_t length, capacity;
  int failed;
} ch_json;
void ch_json_raw(ch_json *json, const char *text);
void ch_json_string(ch_json *json, const char *text, size_t length);
void ch_json_hex(ch_json *json, uintptr_t value);
void ch_json_int(ch_json *json, int64_t value);
/// One target's answer as its HOLDERS-VALUE (holders_json.c), `null` when not found.
void ch_json_holders(ch_json *json, const cholders_holders *holders);

// ---- fork.c ------------------------------------------------------------------------------
/// Registers (once) the fork handlers: before a fork, the short locks are taken so that the
/// child gets consistent tables; in the child every lock is reset (a thread that held one,
/// a scan in progress, is not there) and per-process state is dropped.
void ch_fork_handlers_install(void);
// What each file does at a fork (prepare and parent: the locks the handlers take).
void ch_census_fork_prepare(void);
/// The census lock's parent and child handler alike: the forking thread took it.
void ch_census_fork_after(void);
void ch_arena_fork_prepare(void);
void ch_arena_fork_parent(void);
void ch_arena_fork_child(void);
void ch_registry_fork_prepare(void);
void ch_registry_fork_parent(void);
void ch_registry_fork_child(void);
void ch_naming_fork_prepare(void);
void ch_naming_fork_parent(void);
void ch_naming_fork_child(void);
void ch_scan_fork_child(void);
void ch_hooks_fork_child(void);
void ch_elf_fork_child(void);
void ch_maps_fork_prepare(void);
void ch_maps_fork_parent(void);
void ch_maps_fork_child(void);

// ---- hooks.c -----------------------------------------------------------------------------
/// The calling thread's recursion guard (set while the tool itself runs on this thread).
extern __thread int ch_in_tool __attribute__((tls_model("initial-exec")));


#endif
