// Allocation stacks: a side table from a live object's address to the id of the stack that
// allocated it, and a store of stacks interned by their return addresses, so that the
// thousands of objects one line of code makes share one stack.
//
// Why fixed tables under one spinlock: the allocation hook runs on every Swift allocation in
// the host, which must never block on memory the tool cannot get nor die for the tool's
// sake. Both tables are mapped once (tool memory: the scan never reads the addresses they
// hold as references) and never grow; a full table counts the allocation as dropped and the
// census says how many it could not name. The lock is held only for a few probes; the
// unwind (the expensive part) runs before it. The trade-off: one lock
// for all threads, which an allocation-heavy program with many threads contends on; it is
// paid only with DEALLOCTRACE_ALLOC_STACKS set.
//
// Sampling (DEALLOCTRACE_ALLOC_STACKS=N, N > 1) records one allocation in N per thread: a
// countdown in thread-local storage, so an unsampled allocation takes no lock and unwinds
// nothing. The trade-off: an unsampled allocation does not look at the table either, so the
// entry of an object whose release went unseen (below) may speak for a later unsampled
// object at its address; a sampled one always overwrites it.
//
// An entry leaves with its object's final release (hooks.c). An entry whose release went
// unseen stays until an allocation at the same address overwrites it, so it can never be
// reported for another object: every registered allocation at that address passes here.
#define _GNU_SOURCE

#include <stdlib.h>
#include <string.h>

#include "CHoldersExtras.h"
#include "CUnwind.h"
#include "alloc_stacks.h"
#include "internal.h"

/// Objects with a stack at once: about 16 MiB of address space, committed as touched.
#define OBJECT_SLOTS_DEFAULT (1u << 20)
/// Distinct stacks, and the return addresses they hold in all.
#define STACK_SLOTS (1u << 16)
#define STACK_IPS (STACK_SLOTS * (CH_ALLOC_STACK_DEPTH / 2u))
/// A table is full at seven eighths, so that a probe stays short.
#define FULL(slots) ((slots) / 8 * 7)

/// Frames left out above ch_alloc_stacks_record: the allocation hook's own. swift_allocObject
/// jumps to the hook (a tail call), so its frame is not on the stack; a runtime that kept it
/// would show it first, and the reports' machinery rule leaves it out.
#define HOOK_FRAMES 1

typedef struct {
  uintptr_t address;  // 0: empty
  uint32_t stack;  // index into `stacks`
} object_slot;

typedef struct {
  uint64_t hash;
  uint32_t first;  // index into `ips`
  uint32_t depth;  // 0: empty
} stack_slot;

int ch_alloc_stacks_on;
uint32_t ch_alloc_stacks_sample_every = 1;
/// Allocations this thread made since it last recorded one (sampling only).
static __thread uint32_t unsampled __attribute__((tls_model("initial-exec")));

static object_slot *objects;
static uint32_t object_slots;  // a power of two
static uint32_t object_count;
static stack_slot *stacks;
static uint32_t stack_count;
static uintptr_t *ips;
static uint32_t ips_used;
static uint64_t recorded, dropped;
static int lock;

static void take(void) {
  while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
}
static void give(void) { __atomic_store_n(&lock, 0, __ATOMIC_RELEASE); }

void ch_alloc_stacks_fork_prepare(void) {
  if (ch_alloc_stacks_on) take();
}
void ch_alloc_stacks_fork_parent(void) {
  if (ch_alloc_stacks_on) give();
}
void ch_alloc_stacks_fork_child(void) {
  if (ch_alloc_stacks_on) give();
}

void ch_alloc_stacks_start(void) {
  const char *value = getenv("DEALLOCTRACE_ALLOC_STACKS");
  if (value == NULL || value[0] == 0 || strcmp(value, "0") == 0 || ch_alloc_stacks_on) return;
  // A number above 1 samples; any other value but 0 records every allocation.
  char *end = NULL;
  unsigned long every = strtoul(value, &end, 10);
  if (end != value && *end == 0 && every > 1) {
    ch_alloc_stacks_sample_every = every > UINT32_MAX ? UINT32_MAX : (uint32_t)every;
  }
  object_slots = OBJECT_SLOTS_DEFAULT;
  // CHOLDERS_TEST_ALLOC_STACK_SLOTS=N (a power of two, 8 or more) shrinks the object table so
  // that tests reach its full state with a few objects.
  const char *slots = getenv("CHOLDERS_TEST_ALLOC_STACK_SLOTS");
  if (slots && slots[0] >= '0' && slots[0] <= '9') {
    unsigned long n = strtoul(slots, NULL, 10);
    if (n >= 8 && n <= OBJECT_SLOTS_DEFAULT && (n & (n - 1)) == 0) object_slots = (uint32_t)n;
  }
  // The unwinder is loaded here, not in the first hook: dlopen takes the loader's lock.
  if (!cunwind_load_unwinder()) return;
  objects = ch_map((size_t)object_slots * sizeof(object_slot));
  stacks = ch_map((size_t)STACK_SLOTS * sizeof(stack_slot));
  ips = ch_map((size_t)STACK_IPS * sizeof(uintptr_t));
  if (objects == NULL || stacks == NULL || ips == NULL) return;
  ch_alloc_stacks_on = 1;
}

/// An object's home slot (before the table's mask). Objects of one 4 KiB heap page get
/// neighbouring slots of one 256-slot block (objects are 16-byte aligned), and pages are
/// scattered over the blocks. Why: a hash that scatters every object makes each insert and
/// removal a cache miss in a table of many megabytes, which cost more than the unwind;
/// a program allocates and frees objects that sit together, so a page's block stays cached.
/// The trade-off: pages that share a block probe longer, which a table at most seven
/// eighths full keeps short.
static inline uint32_t object_hash(uintptr_t address) {
  uint32_t page = (uint32_t)(((uint64_t)(address >> 12) * 0x9E3779B97F4A7C15ull) >> 40);
  return (page << 8) | (uint32_t)((address >> 4) & 0xff);
}

static uint64_t stack_hash(const uintptr_t *frames, int depth) {
  uint64_t hash = 0xcbf29ce484222325ull ^ (uint64_t)depth;
  for (int i = 0; i < depth; i++) hash = (hash ^ frames[i]) * 0x100000001b3ull;
  return hash | 1;
}

/// The id of the stack `frames`, interned; UINT32_MAX when the store is full. Under the lock.
static uint32_t intern(const uintptr_t *frames, int depth) {
  uint64_t hash = stack_hash(frames, depth);
  uint32_t slot = (uint32_t)hash & (STACK_SLOTS - 1);
  for (;;) {
    stack_slot *s = &stacks[slot];
    if (s->depth == 0) break;
    if (s->hash == hash && s->depth == (uint32_t)depth &&
        memcmp(&ips[s->first], frames, (size_t)depth * sizeof(uintptr_t)) == 0) {
      return slot;
    }
    slot = (slot + 1) & (STACK_SLOTS - 1);
  }
  if (stack_count >= FULL(STACK_SLOTS) || ips_used + (uint32_t)depth > STACK_IPS) {
    return UINT32_MAX;
  }
  memcpy(&ips[ips_used], frames, (size_t)depth * sizeof(uintptr_t));
  stacks[slot] = (stack_slot){hash, ips_used, (uint32_t)depth};
  ips_used += (uint32_t)depth;
  stack_count++;
  return slot;
}

__attribute__((noinline)) void ch_alloc_stacks_record(uintptr_t object) {
  if (ch_alloc_stacks_sample_every > 1) {
    if (++unsampled < ch_alloc_stacks_sample_every) return;
    unsampled = 0;
  }
  uintptr_t frames[CH_ALLOC_STACK_DEPTH];
  int depth = cunwind_backtrace_above_caller(frames, CH_ALLOC_STACK_DEPTH, HOOK_FRAMES);
  take();
  uint32_t mask = object_slots - 1;
  uint32_t slot = object_hash(object) & mask;
  while (objects[slot].address != 0 && objects[slot].address != object) {
    slot = (slot + 1) & mask;
  }
  uint32_t stack = depth > 0 ? intern(frames, depth) : UINT32_MAX;
  int present = objects[slot].address == object;
  if (stack == UINT32_MAX || (!present && object_count >= FULL(object_slots))) {
    // Nothing to say for this object: an older entry at its address must not speak for it.
    if (present) {
      objects[slot].stack = UINT32_MAX;
    }
    dropped++;
  } else {
    if (!present) object_count++;
    objects[slot] = (object_slot){object, stack};
    recorded++;
  }
  give();
}

void ch_alloc_stacks_forget(uintptr_t object) {
  // The census's own thread releases while other threads are parked, one of which may hold
  // the lock: it leaves the entry, which the next allocation at that address overwrites.
  if (ch_in_tool) return;
  take();
  uint32_t mask = object_slots - 1;
  uint32_t slot = object_hash(object) & mask;
  while (objects[slot].address != 0 && objects[slot].address != object) {
    slot = (slot + 1) & mask;
  }
  if (objects[slot].address == object) {
    // Backward-shift deletion: later entries of the run move up, so that no probe for them
    // stops at the hole.
    uint32_t hole = slot;
    for (uint32_t next = (hole + 1) & mask; objects[next].address != 0;
         next = (next + 1) & mask) {
      uint32_t home = object_hash(objects[next].address) & mask;
      // Move `next` into the hole unless its home lies cyclically in (hole, next].
      int stays = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next);
      if (stays) continue;
      objects[hole] = objects[next];
      hole = next;
    }
    objects[hole] = (object_slot){0, 0};
    object_count--;
  }
  give();
}

size_t ch_alloc_stacks_lookup(uintptr_t object, uintptr_t *out, size_t capacity) {
  if (!ch_alloc_stacks_on) return 0;
  size_t n = 0;
  take();
  uint32_t mask = object_slots - 1;
  uint32_t slot = object_hash(object) & mask;
  while (objects[slot].address != 0 && objects[slot].address != object) {
    slot = (slot + 1) & mask;
  }
  if (objects[slot].address == object && objects[slot].stack != UINT32_MAX) {
    const stack_slot *s = &stacks[objects[slot].stack];
    n = s->depth < capacity ? s->depth : capacity;
    memcpy(out, &ips[s->first], n * sizeof(uintptr_t));
  }
  give();
  return n;
}

size_t cholders_alloc_stack_of(uintptr_t object, uintptr_t *out, size_t capacity) {
  return ch_alloc_stacks_lookup(object, out, capacity);
}

void cholders_alloc_stack_stats(cholders_alloc_stack_counts *out) {
  memset(out, 0, sizeof *out);
  out->on = ch_alloc_stacks_on;
  if (!ch_alloc_stacks_on) return;
  out->sample_every = ch_alloc_stacks_sample_every;
  take();
  out->recorded = recorded;
  out->dropped = dropped;
  out->objects = object_count;
  out->stacks = stack_count;
  give();
}
