// Retain/release history: for objects of the types DEALLOCTRACE_HISTORY names, every strong
// and unowned retain and release the tool sees, each with its stack and the strong count
// after it, in a side table keyed by the object's address. The recorder copies an object's
// history out when it writes a finding for it (cholders_history_of); nothing else is read,
// and a freed object's history goes with it.
//
// Who pays: a type's name is matched against the patterns once, when an allocation first
// shows its metadata (ch_history_note_type); matching metadata go into a short array. A
// retain or release of any object then loads that array's count (0 while nothing matched)
// and, once something matched, the object's metadata and compares it with each matched one.
// Only an object of a matched type unwinds and takes the lock.
//
// What is seen: swift_retain, swift_retain_n, swift_release and swift_release_n, the entries
// libswiftCore lets a tool hook (hooks.c); and the unowned entries, which it does not let a
// tool hook, through CHolders' own weak definitions of them (unowned.c, which says where
// those are reached and where not). An unowned retain or release is an event of its own
// kind, whose count is the strong count it left as it was; swift_unownedRetainStrong (an
// unowned reference loaded strong) is a strong retain, whose release swift_release gives.
// An `n` operation is recorded as `n` events with one stack.
//
// Besides retains and releases, two marks: the allocation (the object's first reference,
// recorded by the allocation hook) and each hand-over to a DeallocQueue (recorded by the
// recorder with the enqueue stack it captured anyway), which the reports' pairing reads as
// the program giving its reference to the queue.
//
// The cap: an object keeps at most CHOLDERS_HISTORY_EVENTS_PER_OBJECT events. A full history
// drops paired retains and releases (each release with the earlier unpaired retain of its
// kind, strong or unowned, whose stack shares the most outermost return addresses with it;
// the oldest of equals), keeps the unpaired ones and the marks, and counts what it dropped;
// a history that pairs nothing drops the new event and counts it as lost. The reports'
// pairing (DeallocLog's RetainPairing) refines this rule with function names and the marks,
// which the recorder does not have at hand; so a compacted history may keep a retain whose
// partner the full history would have shown differently, never fewer outstanding ones.
//
// Tables: fixed, mapped once (tool memory), under one spinlock, as alloc_stacks.c's; full
// tables count the events they could not keep ("lost").
#define _GNU_SOURCE

#include <stdlib.h>
#include <string.h>

#include "CUnwind.h"
#include "history.h"
#include "internal.h"

#define DEPTH CHOLDERS_HISTORY_STACK_DEPTH
#define EVENTS CHOLDERS_HISTORY_EVENTS_PER_OBJECT
/// Objects with a history at once, and their slots (twice as many, for short probes).
#define OBJECTS 4096u
#define OBJECT_SLOTS (2 * OBJECTS)
#define STACK_SLOTS (1u << 15)
#define STACK_IPS (STACK_SLOTS * (DEPTH / 2u))
#define DECIDED_SLOTS 4096u
/// Frames left out above ch_history_record when the hook's return address is not found among
/// the first frames: the hook's own.
#define HOOK_FRAMES 1

typedef struct {
  uintptr_t address;  // 0: empty
  uint32_t block;  // index of its events in `events`
  uint32_t count;
  uint64_t dropped;
} object_slot;

typedef struct {
  uint64_t hash;
  uint32_t first;
  uint32_t depth;  // 0: empty
} stack_slot;

uint32_t ch_history_type_count;
uintptr_t ch_history_types[CH_HISTORY_TYPES];
int ch_history_on;

static char patterns[1024];
static uint64_t types_over_cap;
/// Metadata already decided (matched or not): open addressing, 0 = empty.
static uintptr_t *decided;

static object_slot *objects;
static uint32_t object_count;
static cholders_history_event *events;  // OBJECTS blocks of EVENTS
static uint32_t *free_blocks;  // a stack of block indexes
static uint32_t free_count;
static stack_slot *stacks;
static uint32_t stack_count;
static uintptr_t *ips;
static uint32_t ips_used;
static uint64_t lost;
static int lock;

static void take(void) {
  while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
}
static void give(void) { __atomic_store_n(&lock, 0, __ATOMIC_RELEASE); }

void ch_history_fork_prepare(void) {
  if (ch_history_on) take();
}
void ch_history_fork_parent(void) {
  if (ch_history_on) give();
}
void ch_history_fork_child(void) {
  if (ch_history_on) give();
}

void ch_history_start(void) {
  const char *value = getenv("DEALLOCTRACE_HISTORY");
  if (value == NULL || value[0] == 0 || ch_history_on) return;
  size_t length = strlen(value);
  if (length >= sizeof patterns) length = sizeof patterns - 1;
  memcpy(patterns, value, length);
  patterns[length] = 0;
  if (!cunwind_load_unwinder()) return;
  decided = ch_map(DECIDED_SLOTS * sizeof(uintptr_t));
  objects = ch_map(OBJECT_SLOTS * sizeof(object_slot));
  events = ch_map((size_t)OBJECTS * EVENTS * sizeof(cholders_history_event));
  free_blocks = ch_map(OBJECTS * sizeof(uint32_t));
  stacks = ch_map(STACK_SLOTS * sizeof(stack_slot));
  ips = ch_map((size_t)STACK_IPS * sizeof(uintptr_t));
  if (!decided || !objects || !events || !free_blocks || !stacks || !ips) return;
  for (uint32_t i = 0; i < OBJECTS; i++) free_blocks[i] = OBJECTS - 1 - i;
  free_count = OBJECTS;
  ch_history_on = 1;
}

const char *cholders_history_patterns(void) { return ch_history_on ? patterns : ""; }

// ---- which types -------------------------------------------------------------------------

/// Whether `name` matches `pattern` (`*` any run of characters, everything else itself).
static int glob(const char *pattern, size_t pattern_length, const char *name,
                size_t name_length) {
  size_t p = 0, n = 0, star = (size_t)-1, resume = 0;
  while (n < name_length) {
    if (p < pattern_length && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern_length && pattern[p] == name[n]) {
      p++;
      n++;
    } else if (star != (size_t)-1) {
      p = star + 1;
      n = ++resume;
    } else {
      return 0;
    }
  }
  while (p < pattern_length && pattern[p] == '*') p++;
  return p == pattern_length;
}

/// Whether `name` matches one of the comma-separated patterns (a comma inside `<…>` belongs
/// to a generic type's name; spaces around a pattern are left out).
static int matches_a_pattern(const char *name, size_t name_length) {
  const char *start = patterns;
  int depth = 0;
  for (const char *c = patterns;; c++) {
    if (*c == '<') depth++;
    if (*c == '>' && depth > 0) depth--;
    if (*c == 0 || (*c == ',' && depth == 0)) {
      const char *end = c;
      while (start < end && *start == ' ') start++;
      while (end > start && end[-1] == ' ') end--;
      if (end > start && glob(start, (size_t)(end - start), name, name_length)) return 1;
      if (*c == 0) return 0;
      start = c + 1;
    }
  }
}

void ch_history_note_type(uintptr_t metadata) {
  uint32_t slot = (uint32_t)(((uint64_t)(metadata >> 3) * 0x9E3779B97F4A7C15ull) >> 52);
  for (uint32_t probes = 0;; probes++) {
    if (probes == DECIDED_SLOTS) return;  // full: undecided types get no history
    uintptr_t seen = __atomic_load_n(&decided[slot], __ATOMIC_ACQUIRE);
    if (seen == metadata) return;
    if (seen == 0 && __atomic_compare_exchange_n(&decided[slot], &seen, metadata, 0,
                                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      break;
    }
    if (seen == metadata) return;
    if (seen != 0) slot = (slot + 1) & (DECIDED_SLOTS - 1);
  }
  // Closure contexts, boxes and other heap metadata kinds are never named by a pattern.
  uintptr_t kind = *(const uintptr_t *)metadata;
  if (kind != 0 && kind <= 0x7ff) return;
  // The runtime's name lookup allocates (malloc, never a Swift object) and takes its own
  // lock; the guard keeps this thread's hooks out of the tool's work meanwhile.
  int was_in_tool = ch_in_tool;
  ch_in_tool = 1;
  size_t length = 0;
  const char *name = ch_type_name(metadata, &length);
  int matched = matches_a_pattern(name, length);
  ch_in_tool = was_in_tool;
  if (!matched) return;
  take();
  uint32_t count = ch_history_type_count;
  if (count < CH_HISTORY_TYPES) {
    ch_history_types[count] = metadata;
    __atomic_store_n(&ch_history_type_count, count + 1, __ATOMIC_RELEASE);
  } else {
    types_over_cap++;
  }
  give();
}

void cholders_history_type_counts(uint64_t *matched, uint64_t *over_cap) {
  *matched = __atomic_load_n(&ch_history_type_count, __ATOMIC_ACQUIRE);
  *over_cap = 0;
  if (!ch_history_on) return;
  take();
  *over_cap = types_over_cap;
  give();
}

// ---- the tables --------------------------------------------------------------------------

static inline uint32_t object_hash(uintptr_t address) {
  return (uint32_t)(((uint64_t)(address >> 4) * 0x9E3779B97F4A7C15ull) >> 32);
}

/// The slot of `address`, or the empty slot where it would go. Under the lock.
static uint32_t find(uintptr_t address) {
  uint32_t slot = object_hash(address) & (OBJECT_SLOTS - 1);
  while (objects[slot].address != 0 && objects[slot].address != address) {
    slot = (slot + 1) & (OBJECT_SLOTS - 1);
  }
  return slot;
}

/// The id of stack `frames`, interned; UINT32_MAX when the store is full. Under the lock.
static uint32_t intern(const uintptr_t *frames, int depth) {
  uint64_t hash = 0xcbf29ce484222325ull ^ (uint64_t)depth;
  for (int i = 0; i < depth; i++) hash = (hash ^ frames[i]) * 0x100000001b3ull;
  hash |= 1;
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
  if (stack_count >= STACK_SLOTS / 8 * 7 || ips_used + (uint32_t)depth > STACK_IPS) {
    return UINT32_MAX;
  }
  memcpy(&ips[ips_used], frames, (size_t)depth * sizeof(uintptr_t));
  stacks[slot] = (stack_slot){hash, ips_used, (uint32_t)depth};
  ips_used += (uint32_t)depth;
  stack_count++;
  return slot;
}

/// How many outermost return addresses stacks `a` and `b` share.
static uint32_t shared_outer_frames(uint32_t a, uint32_t b) {
  const stack_slot *x = &stacks[a], *y = &stacks[b];
  uint32_t shared = 0;
  while (shared < x->depth && shared < y->depth &&
         ips[x->first + x->depth - 1 - shared] == ips[y->first + y->depth - 1 - shared]) {
    shared++;
  }
  return shared;
}

/// Drops the paired events of a full history (the rule in this file's opening comment);
/// returns how many it dropped. Under the lock.
static uint32_t drop_paired(cholders_history_event *list, uint32_t count) {
  uint8_t paired[EVENTS];
  memset(paired, 0, sizeof paired);
  uint32_t dropped = 0;
  for (uint32_t release = 0; release < count; release++) {
    uint32_t taker = list[release].op == CH_HISTORY_RELEASE ? CH_HISTORY_RETAIN
                     : list[release].op == CH_HISTORY_UNOWNED_RELEASE ? CH_HISTORY_UNOWNED_RETAIN
                                                                      : 0;
    if (taker == 0) continue;
    uint32_t best = UINT32_MAX, best_shared = 0;
    for (uint32_t retain = 0; retain < release; retain++) {
      if (list[retain].op != taker || paired[retain]) continue;
      uint32_t shared = shared_outer_frames(list[retain].stack, list[release].stack);
      if (best == UINT32_MAX || shared > best_shared) {
        best = retain;
        best_shared = shared;
      }
    }
    if (best == UINT32_MAX) continue;
    paired[best] = paired[release] = 1;
    dropped += 2;
  }
  uint32_t kept = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (!paired[i]) list[kept++] = list[i];
  }
  return dropped;
}

/// Appends one event to `object`'s history. Takes the lock.
static void append(uintptr_t object, int op, int64_t count_after, const uintptr_t *frames,
                   int depth) {
  take();
  uint32_t slot = find(object);
  object_slot *o = &objects[slot];
  if (o->address == 0) {
    // An unowned event never starts a history (unowned.c: it can race the last release).
    if (op == CH_HISTORY_UNOWNED_RETAIN || op == CH_HISTORY_UNOWNED_RELEASE) {
      give();
      return;
    }
    if (object_count >= OBJECTS || free_count == 0) {
      lost++;
      give();
      return;
    }
    *o = (object_slot){object, free_blocks[--free_count], 0, 0};
    object_count++;
  }
  uint32_t stack = depth > 0 ? intern(frames, depth) : UINT32_MAX;
  cholders_history_event *list = &events[(size_t)o->block * EVENTS];
  if (o->count == EVENTS) {
    uint32_t dropped = drop_paired(list, o->count);
    o->count -= dropped;
    o->dropped += dropped;
  }
  if (stack == UINT32_MAX || o->count == EVENTS) {
    lost++;
  } else {
    int32_t after = count_after < 0 || count_after > INT32_MAX ? -1 : (int32_t)count_after;
    list[o->count++] = (cholders_history_event){(uint32_t)op, after, stack};
  }
  give();
}

__attribute__((noinline)) void ch_history_record(uintptr_t object, int op, int64_t count_after,
                                                 uintptr_t caller) {
  if (ch_in_tool) return;
  // Unwound from here, then cut at the hook's return address: how many frames of the tool's
  // lie in between depends on what the compiler inlined (-O0 or -O, a runtime that calls
  // the hook or jumps to it), the return address does not.
  enum { slack = 8 };
  uintptr_t frames[DEPTH + slack];
  int depth = cunwind_backtrace_above_caller(frames, DEPTH + slack, 0);
  int start = 0;
  while (start < depth && start < slack && frames[start] != caller) start++;
  if (start == depth || start == slack) start = depth < HOOK_FRAMES ? depth : HOOK_FRAMES;
  int kept = depth - start < DEPTH ? depth - start : DEPTH;
  append(object, op, count_after, frames + start, kept);
}

void cholders_history_note_enqueue(uintptr_t object, const uintptr_t *frames, size_t count,
                                   int64_t count_after) {
  if (!ch_history_on || !ch_history_wants(object)) return;
  append(object, CH_HISTORY_ENQUEUE, count_after, frames, count > DEPTH ? DEPTH : (int)count);
}

void ch_history_forget(uintptr_t object) {
  // As alloc_stacks.c: the census's own thread leaves the entry while others are parked.
  if (ch_in_tool) return;
  take();
  uint32_t slot = find(object);
  if (objects[slot].address == object) {
    free_blocks[free_count++] = objects[slot].block;
    // Backward-shift deletion, as alloc_stacks.c's.
    uint32_t mask = OBJECT_SLOTS - 1, hole = slot;
    for (uint32_t next = (hole + 1) & mask; objects[next].address != 0;
         next = (next + 1) & mask) {
      uint32_t home = object_hash(objects[next].address) & mask;
      int stays = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next);
      if (stays) continue;
      objects[hole] = objects[next];
      hole = next;
    }
    objects[hole] = (object_slot){0, 0, 0, 0};
    object_count--;
  }
  give();
}

size_t cholders_history_of(uintptr_t object, cholders_history_event *out, size_t capacity,
                           uint64_t *dropped, uint64_t *lost_events) {
  *dropped = 0;
  *lost_events = 0;
  if (!ch_history_on) return 0;
  size_t n = 0;
  take();
  uint32_t slot = find(object);
  if (objects[slot].address == object) {
    n = objects[slot].count < capacity ? objects[slot].count : capacity;
    memcpy(out, &events[(size_t)objects[slot].block * EVENTS], n * sizeof *out);
    *dropped = objects[slot].dropped;
  }
  *lost_events = lost;
  give();
  return n;
}

size_t cholders_history_stack(uint32_t stack, uintptr_t *out, size_t capacity) {
  if (!ch_history_on || stack >= STACK_SLOTS) return 0;
  take();
  const stack_slot *s = &stacks[stack];
  size_t n = s->depth < capacity ? s->depth : capacity;
  memcpy(out, &ips[s->first], n * sizeof(uintptr_t));
  give();
  return n;
}
