// Free glibc malloc memory: which words of a malloc heap lie in chunks the allocator
// considers free, so that a stale copy of an object's address left in a freed buffer (an
// array's old storage, a drained batch, a deallocated UnsafeMutablePointer) is not reported
// as a `heap` holder.
//
// Why a chunk walk: glibc keeps no per-word "free" bit the scan could consult, but its
// main-arena heap (the `[heap]` mapping) is a contiguous run of chunks, each with its size
// at chunk+8 (low bits: PREV_INUSE=1, IS_MMAPPED=2, NON_MAIN_ARENA=4) and its user memory
// at chunk+16, from the mapping's start to the top chunk that ends the mapping. A chunk is
// free when
// - the next chunk's PREV_INUSE bit is clear (unsorted, small and large bins), or
// - it sits in a tcache bin: glibc 2.34+ writes the process-wide random `tcache_key` at
//   user memory + 8 of each tcache entry (learned once here by freeing a probe chunk), or
// - it is the top chunk (memory never handed out again since it was freed into the top), or
// - it sits in a fastbin (chunks of at most 128 bytes, used once the thread's tcache bin
//   holds 7): those keep PREV_INUSE set and carry no key, so they are recognised by their
//   safe-linked next pointer (see fast_free; a heuristic, unlike the other three).
// Other threads' arenas keep their chunks in heaps of their own (anonymous mappings at a
// 64 MiB boundary, see thread_heap_bounds): the same walk covers such a heap up to its top
// chunk; an arena's older heap (which ends in fencepost chunks, not a top) fails the walk and
// keeps reporting its words, as do mmapped chunks and memory of another allocator.
//
// The trade-off: the walk reads the chunk headers of the whole heap once per scan, and
// only when the scan found a word outside every registered object in the heap (a scan
// whose holders are all Swift objects, globals or stacks pays nothing). It reads through
// ch_read (never faults, even when another thread shrinks the heap) and keeps its result
// in the scan's own bump memory. Other threads keep allocating meanwhile, so a chunk split
// or merged during the walk can be misread: any header that is not a plausible chunk (bad
// size or flags, past the end) abandons the walk, and that heap falls back to
// reporting every word as before. A stale answer for one chunk can hide or keep one heap
// word, the same race a scan of live memory always has.
#define _GNU_SOURCE

#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MIN_CHUNK 32u
#define WINDOW (64u << 10)
// The largest fastbin chunk glibc allows: global_max_fast is at most 80 * SIZE_SZ / 4 = 160
// user bytes (176-byte chunks); the default is 128-byte chunks.
#define MAX_FAST_CHUNK 176u

static uintptr_t tcache_key;  // 0 until learned (or when there is no tcache)
static int key_learned;  // under the scan lock

void ch_malloc_learn_key(void) {
  if (key_learned) return;
  key_learned = 1;
  // A fastbin-sized chunk: when the thread's tcache bin for it is full, free() puts it on
  // a fastbin, which writes only the first word, so the cleared second word stays 0 and the
  // next size class is tried. Read back through ch_read: a plain load after free is
  // undefined behaviour (and the sanitizers' business).
  for (size_t size = 24; size <= 120 && tcache_key == 0; size += 16) {
    uintptr_t *probe = malloc(size);
    if (probe == NULL) return;
    probe[0] = 0;
    probe[1] = 0;
    uintptr_t where = (uintptr_t)probe;
    free(probe);
    uintptr_t key = 0;
    if (ch_read(&key, where + 8, sizeof key) == sizeof key) tcache_key = key;
  }
}

/// Whether a fastbin-sized chunk of `size` bytes with user memory at `user` whose first word
/// is `link` reads as a fastbin (or tcache) entry. glibc 2.32+ stores those lists' next
/// pointers "safe-linked": `(user >> 12) ^ next`, and a list holds chunks of one size only,
/// so an entry's first word decodes to NULL (the end of its list) or to the user memory of
/// another chunk of the same size in the same heap (its size word is read to check). Live
/// data rarely looks like that: a Swift object starts with its metadata pointer, a zero word
/// decodes to `user >> 12` (no heap address), and other program data would have to hold
/// glibc's own mangled form. The trade-off: a live buffer whose first word happens to be
/// exactly such a value hides its other words (a heuristic, unlike the key and the bits).
static int fast_free(uintptr_t user, uint64_t size, uint64_t link, uintptr_t start,
                     uintptr_t end, const uint64_t *window, uintptr_t window_start,
                     uintptr_t window_end) {
  uintptr_t next = (uintptr_t)link ^ (user >> 12);
  if (next == 0) return 1;
  if (next < start + 16 || next >= end || (next & 15) || next == user) return 0;
  uint64_t next_size = 0;
  if (next - 8 >= window_start && next <= window_end) {
    next_size = window[(next - 8 - window_start) / 8];
  } else if (ch_read(&next_size, next - 8, 8) != 8) {
    return 0;
  }
  return (next_size & ~(uint64_t)7) == size;
}

/// Appends the free range [start, end), merged with the previous one when only a chunk's
/// size word separates them (a size is never an object address).
static void add_range(uintptr_t *ranges, size_t *count, uintptr_t start, uintptr_t end) {
  if (*count > 0 && start <= ranges[*count * 2 - 1] + 8) {
    ranges[*count * 2 - 1] = end;
    return;
  }
  ranges[*count * 2] = start;
  ranges[*count * 2 + 1] = end;
  (*count)++;
}

/// Where the chunks of a thread arena's heap (a mapping at a 64 MiB boundary) run: its
/// `heap_info` header (arena pointer, previous heap, used size, mprotect'ed size, page size,
/// padded to 48 bytes) precedes the first chunk; the first heap of an arena also holds the
/// arena's `malloc_state` (2200 bytes on glibc 2.36 x86_64) before it. A wrong guess here
/// only makes the walk fail its checks (then nothing is known free in that heap).
static int thread_heap_bounds(uintptr_t start, uintptr_t end, uintptr_t *first,
                              uintptr_t *last) {
  uint64_t info[5];
  if (ch_read(info, start, sizeof info) != sizeof info) return 0;
  uint64_t size = info[2];
  if (size < 4096 || size > end - start || info[3] < size || info[4] == 0) return 0;
  *first = info[0] == start + 48 ? start + 2256 : start + 48;
  *last = start + size;
  return 1;
}

int ch_malloc_free_ranges(ch_bump *bump, uintptr_t start, uintptr_t end, int main_arena,
                          uintptr_t **out, size_t *count) {
  *out = NULL;
  *count = 0;
  if (end <= start || (start & 15)) return 0;
  if (!main_arena && !thread_heap_bounds(start, end, &start, &end)) return 0;
  // Main-arena chunks never carry NON_MAIN_ARENA; a thread arena's free and top chunks may
  // lack it, so there it is allowed either way.
  uint64_t bad_flags = main_arena ? 6 : 2;
  // At most one range per minimum-size chunk; the pages are only touched as used.
  size_t capacity = (end - start) / MIN_CHUNK + 1;
  uintptr_t *ranges = ch_bump_alloc(bump, capacity * 2 * sizeof(uintptr_t));
  uint64_t *window = ch_bump_alloc(bump, WINDOW);
  if (ranges == NULL || window == NULL) return 0;
  uintptr_t window_start = 0, window_end = 0;
  uintptr_t previous = 0;  // the chunk before `chunk`, 0 for the first
  int previous_cached = 0;  // it carries the tcache key
  for (uintptr_t chunk = start;;) {
    if (chunk < window_start || chunk + 32 > window_end) {
      size_t want = end - chunk < WINDOW ? end - chunk : WINDOW;
      size_t got = ch_read(window, chunk, want) & ~(size_t)7;
      if (got < 16) return 0;
      window_start = chunk;
      window_end = chunk + got;
    }
    uint64_t size_word = window[(chunk + 8 - window_start) / 8];
    uint64_t size = size_word & ~(uint64_t)7;
    if ((size_word & bad_flags) || size < MIN_CHUNK || (size & 15) || size > end - chunk) return 0;
    if (previous && (previous_cached || !(size_word & 1))) {
      // The previous chunk's user memory runs through this chunk's prev_size word.
      add_range(ranges, count, previous + 16, chunk + 8);
    }
    if (chunk + size == end) {
      // The top chunk: free memory up to the end of the heap.
      add_range(ranges, count, chunk + 16, end);
      *out = ranges;
      return 1;
    }
    uint64_t user[2] = {0, 0};  // the first two words of user memory
    if (chunk + 32 <= window_end) {
      user[0] = window[(chunk + 16 - window_start) / 8];
      user[1] = window[(chunk + 24 - window_start) / 8];
    } else if (ch_read(user, chunk + 16, 16) != 16) {
      return 0;
    }
    previous_cached = (tcache_key != 0 && user[1] == tcache_key) ||
                      (size <= MAX_FAST_CHUNK &&
                       fast_free(chunk + 16, size, user[0], start, end, window, window_start,
                                 window_end));
    previous = chunk;
    chunk += size;
  }
}

int ch_malloc_is_free(const uintptr_t *ranges, size_t count, uintptr_t address) {
  // Pairs of words (start, end): rows of two words keyed by the first.
  size_t low =
      sorted_rows_at_or_below(ranges, count, 2 * sizeof *ranges, 0, sizeof *ranges, address);
  return low > 0 && address < ranges[(low - 1) * 2 + 1];
}
