// The registry of live Swift objects: address -> (metadata, size), fed by the allocation
// hook and pruned by the release hook.
//
// Design: 256 independent open-addressing tables (linear probing, backward-shift deletion,
// no tombstones), each behind its own spinlock and chosen by the address hash. Why: the
// hooks run on every allocation and final release in the process, so the common case must be
// one uncontended atomic exchange and one or two cache lines; striping keeps threads from
// meeting on one lock, and a per-table resize stalls only 1/256 of the keys. Keyed by
// address, an insert simply replaces a stale entry whose object died unseen (a
// `swift_nonatomic_release`, two racing final releases), so stale entries never accumulate
// beyond freed-but-not-reused addresses, and the scan re-validates every entry by its header.
// The trade-off: 24 bytes per entry at a load of 25-50 % (about 20-40 MB for 450k objects),
// in the tool's own mmap'ed memory.
#define _GNU_SOURCE

#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "internal.h"

#define STRIPES 256
#define INITIAL_CAPACITY 512

typedef struct {
  int lock;
  uint32_t count;
  uint64_t mask;  // capacity - 1
  ch_entry *table;
  char pad[64 - sizeof(int) - sizeof(uint32_t) - sizeof(uint64_t) - sizeof(ch_entry *)];
} stripe;

static stripe stripes[STRIPES] __attribute__((aligned(64)));
static uint64_t live_total;

static inline uint64_t hash(uintptr_t address) {
  return (uint64_t)(address >> 4) * 0x9E3779B97F4A7C15ull;
}

static inline void lock(stripe *s) {
  unsigned spins = 0;
  while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED)) {
      if (++spins > 1000) {
        sched_yield();
        spins = 0;
      } else {
        __builtin_ia32_pause();
      }
    }
  }
}
static inline void unlock(stripe *s) { __atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE); }

/// Places an entry known to be absent (used by resize).
static void place(ch_entry *table, uint64_t mask, const ch_entry *entry) {
  uint64_t i = hash(entry->address) & mask;
  while (table[i].address) i = (i + 1) & mask;
  table[i] = *entry;
}

/// Doubles the table (or creates it). 0 when memory ran out (the entry is then dropped:
/// an unknown object is named nowhere, which is better than failing an allocation).
static int grow(stripe *s) {
  uint64_t capacity = s->table ? (s->mask + 1) * 2 : INITIAL_CAPACITY;
  ch_entry *table = ch_map(capacity * sizeof(ch_entry));
  if (table == NULL) return 0;
  uint64_t mask = capacity - 1;
  if (s->table) {
    for (uint64_t i = 0; i <= s->mask; i++) {
      if (s->table[i].address) place(table, mask, &s->table[i]);
    }
    ch_unmap(s->table, (s->mask + 1) * sizeof(ch_entry));
  }
  s->table = table;
  s->mask = mask;
  return 1;
}

void ch_registry_insert(uintptr_t address, uintptr_t metadata, uint64_t size) {
  if (address == 0) return;
  uint64_t h = hash(address);
  stripe *s = &stripes[h >> 56];
  lock(s);
  if (s->table == NULL || (uint64_t)(s->count + 1) * 2 > s->mask + 1) {
    if (!grow(s)) {
      unlock(s);
      return;
    }
  }
  uint64_t i = h & s->mask;
  while (s->table[i].address && s->table[i].address != address) i = (i + 1) & s->mask;
  if (s->table[i].address == 0) {
    s->count++;
    __atomic_add_fetch(&live_total, 1, __ATOMIC_RELAXED);
  }
  s->table[i].address = address;
  s->table[i].metadata = metadata;
  s->table[i].size = size;
  unlock(s);
}

void ch_registry_remove(uintptr_t address) {
  uint64_t h = hash(address);
  stripe *s = &stripes[h >> 56];
  lock(s);
  if (s->table == NULL) {
    unlock(s);
    return;
  }
  uint64_t mask = s->mask;
  uint64_t i = h & mask;
  while (s->table[i].address != address) {
    if (s->table[i].address == 0) {
      unlock(s);
      return;
    }
    i = (i + 1) & mask;
  }
  // Backward-shift deletion: pull later members of the probe run into the hole, so lookups
  // never need tombstones.
  uint64_t hole = i;
  uint64_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (s->table[j].address == 0) break;
    uint64_t home = hash(s->table[j].address) & mask;
    // Move j into the hole when its home is not cyclically inside (hole, j].
    int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!between) {
      s->table[hole] = s->table[j];
      hole = j;
    }
  }
  s->table[hole].address = 0;
  s->count--;
  __atomic_sub_fetch(&live_total, 1, __ATOMIC_RELAXED);
  unlock(s);
}

// fork() while another thread holds a stripe lock would leave the child's next allocation
// spinning forever: the stripes are taken around fork and released on both sides.
static void before_fork(void) {
  for (int k = 0; k < STRIPES; k++) lock(&stripes[k]);
}
static void after_fork(void) {
  for (int k = STRIPES; k-- > 0;) unlock(&stripes[k]);
}

void ch_registry_install_fork_handlers(void) {
  static int installed;
  if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL)) return;
  pthread_atfork(before_fork, after_fork, after_fork);
}

uint64_t ch_registry_count(void) { return __atomic_load_n(&live_total, __ATOMIC_RELAXED); }

/// LSD radix sort on address bits 4..58 (objects are 16-byte aligned): five 11-bit digits,
/// all counted in one read, and a digit that every row shares (the high ones, mostly) is
/// skipped. 2048 buckets keep the scatter's write streams within the caches, which 65536
/// did not (that sort was half of a 450k-object scan). Why not qsort: it mallocs a
/// temporary copy of the rows, which would then hold every object, and n log n comparisons
/// of 450k rows cost tens of milliseconds.
#define DIGIT_BITS 11
#define DIGITS 5
#define BUCKETS (1u << DIGIT_BITS)

static void radix_sort(ch_entry *rows, ch_entry *scratch, size_t n, uint32_t *counts) {
  memset(counts, 0, DIGITS * BUCKETS * sizeof(uint32_t));
  for (size_t i = 0; i < n; i++) {
    uintptr_t key = rows[i].address >> 4;
    for (int d = 0; d < DIGITS; d++) {
      counts[d * BUCKETS + ((key >> (d * DIGIT_BITS)) & (BUCKETS - 1))]++;
    }
  }
  ch_entry *from = rows, *to = scratch;
  for (int d = 0; d < DIGITS; d++) {
    uint32_t *count = counts + d * BUCKETS;
    int trivial = 0;
    for (size_t b = 0; b < BUCKETS; b++) {
      if (count[b] == n) trivial = 1;
      if (count[b]) break;
    }
    if (trivial || n == 0) continue;
    uint32_t sum = 0;
    for (size_t b = 0; b < BUCKETS; b++) {
      uint32_t c = count[b];
      count[b] = sum;
      sum += c;
    }
    int shift = 4 + d * DIGIT_BITS;
    for (size_t i = 0; i < n; i++) {
      to[count[(from[i].address >> shift) & (BUCKETS - 1)]++] = from[i];
    }
    ch_entry *t = from;
    from = to;
    to = t;
  }
  if (from != rows) memcpy(rows, from, n * sizeof(ch_entry));
}

size_t ch_registry_snapshot(ch_bump *bump, ch_entry **out) {
  // Sized with slack for allocations that happen while copying; a stripe that outgrew
  // the estimate is copied up to the room left.
  size_t room = (size_t)ch_registry_count() + 4096;
  room += room / 8;
  ch_entry *rows = ch_bump_alloc(bump, room * sizeof(ch_entry));
  ch_entry *scratch = ch_bump_alloc(bump, room * sizeof(ch_entry));
  uint32_t *counts = ch_bump_alloc(bump, DIGITS * BUCKETS * sizeof(uint32_t));
  if (rows == NULL || scratch == NULL || counts == NULL) {
    *out = NULL;
    return 0;
  }
  size_t n = 0;
  for (int k = 0; k < STRIPES; k++) {
    stripe *s = &stripes[k];
    lock(s);
    if (s->table) {
      for (uint64_t i = 0; i <= s->mask && n < room; i++) {
        if (s->table[i].address) rows[n++] = s->table[i];
      }
    }
    unlock(s);
  }
  radix_sort(rows, scratch, n, counts);
  *out = rows;
  return n;
}
