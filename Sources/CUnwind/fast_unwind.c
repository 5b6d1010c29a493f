// The unwinder of the hot paths (allocation stacks, retain history, enqueue stacks): a walk
// that follows each frame's step rule (frame_rules.c) from a cache keyed by return address.
//
// Why not libunwind alone: with allocation stacks on, an unwind runs on every Swift
// allocation of the host, and `unw_backtrace`'s cost per frame (a chain of dependent loads
// and its own bookkeeping) was most of that mode's cost (`dealloctrace-bench alloc-stacks`
// times both). A program's return addresses are few and each one's rule never changes, so
// a step here is a hash probe and two loads. Anything the rules cannot express (no
// call-frame information, a signal frame, a CFA from an expression) makes the whole walk
// libunwind's, so the stacks are the same either way (FastUnwinderTests compares the two).
//
// The memo: consecutive walks on a thread share their outer frames (a loop that allocates
// is called from the same place every time). Each thread keeps its last walk; a walk that
// reaches one of its frames (same code address, stack pointer and RBP) checks every word
// the last walk read above that frame and, if none changed, copies its frames: a load and a
// compare a frame, with no dependency from one frame to the next.
//
// What it trusts: a code address keeps its rule for the life of the process. A library
// unloaded (dlclose) and another loaded at the same address would be walked with the old
// rules; Swift programs rarely unload code. A thread that switches stacks by hand
// (makecontext) and frees one to map another at the same address could meet a memo of the
// freed stack; signal handlers on an alternate stack cannot (their stack pointers differ).
//
// The cache: a fixed table mapped once, insert-only, lock-free. A slot's rule is written
// before its key is published (release), and a key never changes afterwards, so a reader
// that sees its key sees the rule; two threads that miss on the same address may both
// insert it, which costs a slot, never a wrong rule. A full table (seven eighths) stops
// inserting, and a miss then reads the call-frame information every time.
#define _GNU_SOURCE

#include <pthread.h>
#include <sys/mman.h>

#include "CUnwind.h"
#include "fast_unwind.h"
#include "frame_rules.h"

/// Return addresses with a cached rule: 1 MiB of address space, touched as filled.
#define RULE_SLOTS (1u << 16)
/// The largest frame a step accepts: a larger distance between two CFAs is a broken walk.
#define LARGEST_FRAME ((uintptr_t)1 << 24)

typedef struct {
  uintptr_t key;  // the return address; 0: empty
  frame_rule rule;
} rule_slot;

static rule_slot *rules;
/// Frees a thread's memo of its last walk when the thread exits (below).
static pthread_key_t memo_key;
static int memo_key_made;
static void drop_memo(void *memo);
static uint32_t rules_used;
static int fast_unwinder_on;

void cunwind_fast_unwinder_start(void) {
  if (!FRAME_RULES_SUPPORTED) return;
  void *table = mmap(NULL, (size_t)RULE_SLOTS * sizeof(rule_slot), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (table == MAP_FAILED) return;
  rules = table;
  memo_key_made = pthread_key_create(&memo_key, drop_memo) == 0;
  __atomic_store_n(&fast_unwinder_on, 1, __ATOMIC_RELEASE);
}

/// Whether the cache is mapped and the walk may be tried.
static inline int fast_unwinder_enabled(void) {
  return __atomic_load_n(&fast_unwinder_on, __ATOMIC_ACQUIRE);
}

static inline uint32_t slot_of(uintptr_t key) {
  return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 48);
}

/// The rule for the frame whose code address is `key`; `pc` is where its call-frame
/// information is read (the call instruction for a return address).
static frame_rule rule_for(uintptr_t key, uintptr_t pc) {
  uint32_t slot = slot_of(key);
  for (;;) {
    uintptr_t seen = __atomic_load_n(&rules[slot].key, __ATOMIC_ACQUIRE);
    if (seen == key) return rules[slot].rule;
    if (seen == 0) break;
    slot = (slot + 1) & (RULE_SLOTS - 1);
  }
  frame_rule rule = frame_rule_at(pc);
  if (__atomic_load_n(&rules_used, __ATOMIC_RELAXED) >= RULE_SLOTS / 8 * 7) return rule;
  for (;;) {
    uintptr_t expected = 0;
    // Claim the slot with a key no code address has, write the rule, then publish.
    if (__atomic_compare_exchange_n(&rules[slot].key, &expected, (uintptr_t)1, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      rules[slot].rule = rule;
      __atomic_store_n(&rules[slot].key, key, __ATOMIC_RELEASE);
      __atomic_fetch_add(&rules_used, 1, __ATOMIC_RELAXED);
      return rule;
    }
    slot = (slot + 1) & (RULE_SLOTS - 1);
  }
}

// ---- the walk, and its memo of the thread's last one ---------------------------------------

/// One frame's registers, as the walk knows them: its code address, its stack pointer and
/// RBP, and where that RBP was loaded from when the walk stepped into this frame (0: it
/// was not loaded, the callee left RBP as it was).
typedef struct {
  uintptr_t ip, sp, bp, bp_slot;
} walk_state;

/// How a step ended.
enum { STEP_BROKEN = -1, STEP_END = 0, STEP_MOVED = 1, STEP_ZERO = 2 };

/// Steps `from` to its caller `to`. `first`: `from` is the walk's own frame, whose code
/// address is not a return address.
__attribute__((no_sanitize("address"))) static inline int step(const walk_state *from, int first,
                                                               walk_state *to) {
  frame_rule rule = rule_for(from->ip, first ? from->ip : from->ip - 1);
  if (rule.kind == FRAME_RULE_END) return STEP_END;
  if (rule.kind != FRAME_RULE_STEP) return STEP_BROKEN;
  uintptr_t base = rule.cfa_register == FRAME_REGISTER_RSP ? from->sp : from->bp;
  uintptr_t cfa = base + (uintptr_t)(intptr_t)rule.cfa_offset;
  if (cfa <= from->sp || cfa - from->sp > LARGEST_FRAME) return STEP_BROKEN;
  to->bp_slot = rule.rbp_offset != 0 ? cfa + (uintptr_t)(intptr_t)rule.rbp_offset : 0;
  to->bp = to->bp_slot != 0 ? *(const uintptr_t *)to->bp_slot : from->bp;
  to->ip = *(const uintptr_t *)(cfa - 8);
  to->sp = cfa;
  return to->ip == 0 ? STEP_ZERO : STEP_MOVED;
}

/// Frames the memo keeps: a walk longer than this is not kept.
enum { MEMO_STATES = 64 };

/// The thread's last walk, outermost frame first, so that the next walk, which shares its
/// outer frames, rewrites only its inner ones. `ended`: the frame past the outermost one
/// was the stack's end (its rule said so), not a capacity's cut.
typedef struct {
  uint32_t count;
  uint8_t ended;
  uint8_t busy;  // a walk uses it; a signal handler's walk on this thread then goes without
  walk_state states[MEMO_STATES];
} walk_memo;

#define MEMO_BYTES 4096u
_Static_assert(sizeof(walk_memo) <= MEMO_BYTES, "the memo fits its page");

static __thread walk_memo *thread_memo __attribute__((tls_model("initial-exec")));
/// A thread whose page could not be mapped points here: always busy, never used.
static walk_memo no_memo = {.busy = 1};

static void drop_memo(void *memo) {
  if (memo != &no_memo) munmap(memo, MEMO_BYTES);
  thread_memo = NULL;
}

/// This thread's memo, marked busy; NULL while another walk on this thread holds it.
static walk_memo *take_memo(void) {
  walk_memo *memo = thread_memo;
  if (__builtin_expect(memo == NULL, 0)) {
    if (!memo_key_made) return NULL;
    void *page = mmap(NULL, MEMO_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    memo = page == MAP_FAILED ? &no_memo : page;
    thread_memo = memo;
    if (memo != &no_memo) pthread_setspecific(memo_key, memo);
  }
  if (memo->busy) return NULL;
  memo->busy = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return memo;
}

static void give_memo(walk_memo *memo) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  memo->busy = 0;
}

/// Whether every word the memo's walk read above state `m` (each frame's return address and
/// saved RBP) still holds what it read then. If so, a walk from state `m` now would read the
/// same words, apply the same cached rules and give the same frames: the memo's.
__attribute__((no_sanitize("address"))) static int memo_holds_above(const walk_memo *memo,
                                                                    uint32_t m) {
  uintptr_t differences = 0;
  for (uint32_t k = 0; k < m; k++) {
    const walk_state *s = &memo->states[k];
    differences |= *(const uintptr_t *)(s->sp - 8) ^ s->ip;
    if (s->bp_slot != 0) differences |= *(const uintptr_t *)s->bp_slot ^ s->bp;
  }
  return differences == 0;
}

/// The memo's state that is the same frame as `state`, searched from `*cursor` outwards
/// (stack pointers grow outwards); -1 when there is none.
static inline int memo_match(const walk_memo *memo, int *cursor, const walk_state *state) {
  int m = *cursor;
  while (m >= 0 && memo->states[m].sp < state->sp) m--;
  *cursor = m;
  if (m < 0) return -1;
  const walk_state *known = &memo->states[m];
  int same = known->sp == state->sp && known->ip == state->ip && known->bp == state->bp;
  return same ? m : -1;
}

/// Keeps this walk in the memo: its `fresh` states (innermost first, the last of them the
/// memo's state `m` when `m` >= 0) in front of the memo's states from `m` out.
static void remember(walk_memo *memo, const walk_state *fresh, uint32_t fresh_count, int m,
                     int ended) {
  uint32_t kept = m >= 0 ? (uint32_t)m + 1 : 0;
  uint32_t added = m >= 0 ? fresh_count - 1 : fresh_count;
  if (kept + added > MEMO_STATES) {
    memo->count = 0;
    return;
  }
  for (uint32_t j = 0; j < added; j++) memo->states[kept + j] = fresh[added - 1 - j];
  memo->count = kept + added;
  if (m < 0) memo->ended = (uint8_t)ended;
}

/// Copies the memo's frames outwards of its state `m` into `buffer` from `count` on, up to
/// `capacity`; returns the new count.
static int copy_from_memo(const walk_memo *memo, int m, void **buffer, int count,
                          int capacity) {
  for (int k = m - 1; k >= 0 && count < capacity; k--) {
    buffer[count++] = (void *)memo->states[k].ip;
  }
  return count;
}

/// Walks from `state` (the walk's own frame), storing the return addresses of the frames
/// above it; with a memo, stops stepping at the first frame the memo's walk shared and
/// copies the rest once its words are checked. Returns how many, or -1 when a frame's rule
/// cannot be followed.
static int walk(walk_state state, void **buffer, int capacity, walk_memo *memo) {
  walk_state fresh[MEMO_STATES];  // this walk's states up to the shared one, innermost first
  uint32_t fresh_count = 0;
  int too_long = 0, count = 0, first = 1, ended = 0, shared = -1;
  int cursor = memo ? (int)memo->count - 1 : -1;
  for (;;) {
    if (shared < 0) {
      if (fresh_count < MEMO_STATES) {
        fresh[fresh_count++] = state;
      } else {
        too_long = 1;
      }
    }
    if (count == capacity) break;
    int m = cursor >= 0 ? memo_match(memo, &cursor, &state) : -1;
    if (m >= 0) {
      cursor = -1;  // one try per walk: a memo that no longer holds is replaced
      if (memo_holds_above(memo, (uint32_t)m)) {
        shared = m;
        count = copy_from_memo(memo, m, buffer, count, capacity);
        if (count == capacity || memo->ended) break;
        state = memo->states[0];  // the memo's walk was cut there: step on from it
        first = 0;
        continue;
      }
    }
    walk_state next;
    int result = step(&state, first, &next);
    first = 0;
    if (result == STEP_BROKEN) return -1;
    if (result != STEP_MOVED) {
      ended = result == STEP_END;
      break;
    }
    buffer[count++] = (void *)next.ip;
    state = next;
  }
  if (memo != NULL) {
    if (too_long) {
      memo->count = 0;
    } else {
      remember(memo, fresh, fresh_count, shared, ended);
    }
  }
  return count;
}

__attribute__((noinline)) int cunwind_fast_backtrace(void **buffer, int capacity) {
  if (capacity <= 0 || !fast_unwinder_enabled()) return -1;
  walk_state state = {0, 0, 0, 0};
#if FRAME_RULES_SUPPORTED
  // This frame's own registers: the walk starts here, so the first address it stores is
  // this function's return address, as `unw_backtrace`'s first is.
  __asm__ volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2"
                   : "=r"(state.ip), "=r"(state.sp), "=r"(state.bp));
#endif
  walk_memo *memo = take_memo();
  int count = walk(state, buffer, capacity, memo);
  if (memo != NULL) give_memo(memo);
  return count;
}
