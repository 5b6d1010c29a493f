// The registry of live Swift objects: one bit per 16-byte granule of address space, set by
// the allocation hook and cleared by the release hook, plus the set of metadata pointers
// those allocations used.
//
// Why a bitmap: the hooks run on every allocation and final release in the process. A hash
// table keyed by address sends each of them to a random cache line of a table as large as
// the heap's object count (tens of MB), which cost about 140 ns per operation on this VM:
// the hooks then doubled an allocation-heavy program's time. A bit at `address / 16` sits
// next to the bits of the objects malloc placed beside it, so consecutive allocations and
// frees touch the same line; setting it is one atomic OR, with no lock.
//
// The trade-off: the registry knows addresses only. The scan reads each object's type from
// its header and its extent from glibc's chunk header in memory it reads anyway, and takes
// a header as a live object's only when its metadata pointer is one an allocation used
// (so a stale bit over reused memory reads as nothing). That ties the registry to glibc's
// malloc, which hooks.c checks before it installs anything, or to AddressSanitizer's, whose
// runtime gives the extent instead (asan.c).
//
// Layout: a level-1 table of 2^21 pointers (one per 64 MiB of the 47-bit user address
// space) to bitmaps of 512 KiB, all in the tool's own mmap'ed memory, touched (and so
// committed) only where objects live. Addresses beyond 47 bits are not registered.
#define _GNU_SOURCE

#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GRANULE_SHIFT CH_REGISTRY_GRANULE_SHIFT
#define SPAN_SHIFT CH_REGISTRY_SPAN_SHIFT
#define ADDRESS_BITS 47
#define SPANS (1ull << (ADDRESS_BITS - SPAN_SHIFT))
#define BITMAP_WORDS CH_REGISTRY_BITMAP_WORDS
#define BITMAPS_PER_SLAB 16
#define MAX_SPANS_LISTED 8192
#define METADATA_SLOTS (1u << 16)

static uint64_t **spans;  // level 1: SPANS entries, NULL where no object ever lived
// The spans that have a bitmap, in installation order, so that counting and snapshots visit
// only those (span indexes are small integers, never object addresses, so this static array
// is no holder). Once a span finds the list full, both walk the whole level-1 table instead
// (2^21 pointers, a few milliseconds): slower, never shorter.
static uint32_t listed_spans[MAX_SPANS_LISTED];
static uint32_t listed_count;
static uint32_t listing_capacity = MAX_SPANS_LISTED;
static int listing_overflowed;
static uint64_t *slab;  // bitmaps not handed out yet
static uint32_t slab_left;
static int slab_lock;

static uintptr_t *metadata_set;  // open addressing, 0 = empty
static uint32_t metadata_count;

int ch_registry_start(void) {
  if (spans) return 1;
  // CHOLDERS_TEST_SPANS_UNLISTED=N (0 to MAX_SPANS_LISTED) lists only the first N spans,
  // so that tests reach the overflow with the few spans a test process has: the spans
  // after those are really unlisted, as past MAX_SPANS_LISTED.
  const char *unlisted = getenv("CHOLDERS_TEST_SPANS_UNLISTED");
  if (unlisted && unlisted[0] >= '0' && unlisted[0] <= '9') {
    long capacity = strtol(unlisted, NULL, 10);
    if (capacity <= MAX_SPANS_LISTED) listing_capacity = (uint32_t)capacity;
  }
  spans = ch_map(SPANS * sizeof(uint64_t *));
  metadata_set = ch_map(METADATA_SLOTS * sizeof(uintptr_t));
  return spans != NULL && metadata_set != NULL;
}

static void lock_slab(void) {
  while (__atomic_exchange_n(&slab_lock, 1, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
}

void ch_registry_fork_prepare(void) { lock_slab(); }
void ch_registry_fork_parent(void) { __atomic_store_n(&slab_lock, 0, __ATOMIC_RELEASE); }
void ch_registry_fork_child(void) { __atomic_store_n(&slab_lock, 0, __ATOMIC_RELEASE); }

/// The bitmap of `span`, created on first use. NULL when memory ran out (the object is then
/// unknown to the scan, which is better than failing an allocation).
static uint64_t *bitmap_of(uint64_t span) {
  uint64_t *bitmap = __atomic_load_n(&spans[span], __ATOMIC_ACQUIRE);
  if (bitmap) return bitmap;
  lock_slab();
  bitmap = __atomic_load_n(&spans[span], __ATOMIC_ACQUIRE);
  if (bitmap == NULL) {
    if (slab_left == 0) {
      slab = ch_map(BITMAPS_PER_SLAB * BITMAP_WORDS * sizeof(uint64_t));
      slab_left = slab ? BITMAPS_PER_SLAB : 0;
    }
    if (slab_left > 0) {
      bitmap = slab;
      slab += BITMAP_WORDS;
      slab_left--;
      if (listed_count < listing_capacity) {
        listed_spans[listed_count] = (uint32_t)span;
        __atomic_store_n(&listed_count, listed_count + 1, __ATOMIC_RELEASE);
      } else {
        __atomic_store_n(&listing_overflowed, 1, __ATOMIC_RELEASE);
      }
      // Published after the list (or the overflow flag), so that a walk that sees the
      // bitmap also visits its span.
      __atomic_store_n(&spans[span], bitmap, __ATOMIC_RELEASE);
    }
  }
  __atomic_store_n(&slab_lock, 0, __ATOMIC_RELEASE);
  return bitmap;
}

void ch_registry_insert(uintptr_t address) {
  uint64_t span = address >> SPAN_SHIFT;
  if (span >= SPANS) return;
  uint64_t *bitmap = bitmap_of(span);
  if (bitmap == NULL) return;
  uint64_t bit = (address >> GRANULE_SHIFT) & (BITMAP_WORDS * 64 - 1);
  __atomic_fetch_or(&bitmap[bit >> 6], 1ull << (bit & 63), __ATOMIC_RELAXED);
}

void ch_registry_remove(uintptr_t address) {
  uint64_t span = address >> SPAN_SHIFT;
  if (span >= SPANS) return;
  uint64_t *bitmap = __atomic_load_n(&spans[span], __ATOMIC_ACQUIRE);
  if (bitmap == NULL) return;
  uint64_t bit = (address >> GRANULE_SHIFT) & (BITMAP_WORDS * 64 - 1);
  __atomic_fetch_and(&bitmap[bit >> 6], ~(1ull << (bit & 63)), __ATOMIC_RELAXED);
}

static inline uint32_t metadata_slot(uintptr_t metadata) {
  return (uint32_t)(((uint64_t)(metadata >> 3) * 0x9E3779B97F4A7C15ull) >> 48);
}

void ch_metadata_note(uintptr_t metadata) {
  uint32_t slot = metadata_slot(metadata);
  for (uint32_t probes = 0; probes < METADATA_SLOTS; probes++) {
    uintptr_t seen = __atomic_load_n(&metadata_set[slot], __ATOMIC_ACQUIRE);
    if (seen == metadata) return;
    if (seen == 0) {
      // Past three quarters full, new types go unnamed rather than slowing every probe.
      if (__atomic_load_n(&metadata_count, __ATOMIC_RELAXED) >= METADATA_SLOTS / 4 * 3) return;
      if (__atomic_compare_exchange_n(&metadata_set[slot], &seen, metadata, 0,
                                      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&metadata_count, 1, __ATOMIC_RELAXED);
        return;
      }
      if (seen == metadata) return;
    }
    slot = (slot + 1) & (METADATA_SLOTS - 1);
  }
}

int ch_metadata_known(uintptr_t metadata) {
  if (metadata == 0 || metadata_set == NULL) return 0;
  uint32_t slot = metadata_slot(metadata);
  for (uint32_t probes = 0; probes < METADATA_SLOTS; probes++) {
    uintptr_t seen = __atomic_load_n(&metadata_set[slot], __ATOMIC_ACQUIRE);
    if (seen == metadata) return 1;
    if (seen == 0) return 0;
    slot = (slot + 1) & (METADATA_SLOTS - 1);
  }
  return 0;
}

int ch_registry_spans_unlisted(void) {
  return __atomic_load_n(&listing_overflowed, __ATOMIC_ACQUIRE);
}

size_t ch_registry_sorted_spans(ch_bump *bump, uint32_t **out) {
  *out = NULL;
  if (__atomic_load_n(&listing_overflowed, __ATOMIC_ACQUIRE)) {
    size_t n = 0;
    for (uint64_t span = 0; span < SPANS; span++) {
      n += __atomic_load_n(&spans[span], __ATOMIC_ACQUIRE) != NULL;
    }
    uint32_t *all = ch_bump_alloc(bump, (n + 1) * sizeof(uint32_t));
    if (all == NULL) return 0;
    size_t k = 0;
    for (uint64_t span = 0; span < SPANS && k < n; span++) {
      if (__atomic_load_n(&spans[span], __ATOMIC_ACQUIRE)) all[k++] = (uint32_t)span;
    }
    *out = all;
    return k;
  }
  uint32_t n = __atomic_load_n(&listed_count, __ATOMIC_ACQUIRE);
  uint32_t *list = ch_bump_alloc(bump, (n + 1) * sizeof(uint32_t));
  if (list == NULL) return 0;
  memcpy(list, listed_spans, n * sizeof(uint32_t));
  for (uint32_t i = 1; i < n; i++) {  // insertion sort: a handful of spans
    uint32_t value = list[i];
    uint32_t j = i;
    for (; j > 0 && list[j - 1] > value; j--) list[j] = list[j - 1];
    list[j] = value;
  }
  *out = list;
  return n;
}

const uint64_t *ch_registry_bitmap(uint32_t span) {
  return spans && span < SPANS ? __atomic_load_n(&spans[span], __ATOMIC_ACQUIRE) : NULL;
}

uint64_t ch_registry_resident(void) {
  if (spans == NULL) return 0;
  uint64_t total = ch_resident_bytes(spans, SPANS * sizeof(uint64_t *)) +
                   ch_resident_bytes(metadata_set, METADATA_SLOTS * sizeof(uintptr_t));
  int walk_all = __atomic_load_n(&listing_overflowed, __ATOMIC_ACQUIRE);
  uint64_t n = walk_all ? SPANS : __atomic_load_n(&listed_count, __ATOMIC_ACQUIRE);
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t *bitmap = __atomic_load_n(&spans[walk_all ? i : listed_spans[i]],
                                             __ATOMIC_ACQUIRE);
    if (bitmap) total += ch_resident_bytes(bitmap, BITMAP_WORDS * sizeof(uint64_t));
  }
  return total;
}

static uint64_t bitmap_population(const uint64_t *bitmap) {
  uint64_t total = 0;
  for (uint64_t w = 0; w < BITMAP_WORDS; w++) {
    total += (uint64_t)__builtin_popcountll(__atomic_load_n(&bitmap[w], __ATOMIC_RELAXED));
  }
  return total;
}

uint64_t ch_registry_count(void) {
  if (spans == NULL) return 0;
  uint64_t total = 0;
  if (__atomic_load_n(&listing_overflowed, __ATOMIC_ACQUIRE)) {
    for (uint64_t span = 0; span < SPANS; span++) {
      const uint64_t *bitmap = __atomic_load_n(&spans[span], __ATOMIC_ACQUIRE);
      if (bitmap) total += bitmap_population(bitmap);
    }
    return total;
  }
  uint32_t n = __atomic_load_n(&listed_count, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++) {
    total += bitmap_population(__atomic_load_n(&spans[listed_spans[i]], __ATOMIC_ACQUIRE));
  }
  return total;
}

size_t ch_registry_snapshot_status(ch_bump *bump, ch_entry **out, ch_snapshot_status *status) {
  ch_snapshot_status local;
  if (status == NULL) status = &local;
  memset(status, 0, sizeof *status);
  *out = NULL;
  if (spans == NULL) return 0;
  status->spans_walked = ch_registry_spans_unlisted();
  uint32_t *list = NULL;
  size_t span_count = ch_registry_sorted_spans(bump, &list);
  if (list == NULL) {
    status->incomplete = 1;
    return 0;
  }
  // Sized from a count over the same spans, with slack for allocations made while copying;
  // when more bits are set than that, the rows move to a buffer twice as large: the copy is
  // never cut short while memory lasts.
  size_t room = (size_t)ch_registry_count() + 4096;
  room += room / 8;
  ch_entry *rows = ch_bump_alloc(bump, room * sizeof(ch_entry));
  if (rows == NULL) {
    status->incomplete = 1;
    return 0;
  }
  size_t n = 0;
  for (size_t i = 0; i < span_count; i++) {
    const uint64_t *bitmap = __atomic_load_n(&spans[list[i]], __ATOMIC_ACQUIRE);
    uintptr_t base = (uintptr_t)list[i] << SPAN_SHIFT;
    for (uint64_t w = 0; w < BITMAP_WORDS; w++) {
      uint64_t bits = __atomic_load_n(&bitmap[w], __ATOMIC_RELAXED);
      while (bits) {
        if (n == room) {
          ch_entry *larger = ch_bump_alloc(bump, 2 * room * sizeof(ch_entry));
          if (larger == NULL) {
            // Out of memory: the rows so far, and the caller told that more were set.
            status->incomplete = 1;
            *out = rows;
            return n;
          }
          memcpy(larger, rows, n * sizeof(ch_entry));
          rows = larger;
          room *= 2;
          status->grown++;
        }
        uint64_t bit = w * 64 + (uint64_t)__builtin_ctzll(bits);
        bits &= bits - 1;
        rows[n++] = (ch_entry){base + (bit << GRANULE_SHIFT), 0, 0};
      }
    }
  }
  *out = rows;
  return n;
}

size_t ch_registry_snapshot(ch_bump *bump, ch_entry **out) {
  ch_snapshot_status status;
  size_t n = ch_registry_snapshot_status(bump, out, &status);
  if (status.incomplete) {
    *out = NULL;
    return 0;
  }
  return n;
}
