// The tool's own memory: plain anonymous mmap regions, listed so that the scan skips them.
//
// Why not malloc: the scan looks for words equal to an object's address in all private
// writable memory, and malloc memory is part of it; a registry entry or a snapshot row in
// malloc memory would show up as a holder of every object. mmap'ed regions are also never
// merged into glibc's bookkeeping, so a hook that runs inside malloc cannot deadlock on it.
// The trade-off: each region costs a system call, so allocations are grouped (tables and
// bump chunks of at least 1 MB).
#define _GNU_SOURCE

#include <fcntl.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#include "CHoldersExtras.h"
#include "internal.h"

#define CH_MAX_RANGES 1024

static struct {
  uintptr_t start, end;
} ranges[CH_MAX_RANGES];
static size_t range_count;
static int ranges_lock;

static void lock_ranges(void) {
  while (__atomic_exchange_n(&ranges_lock, 1, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
}
static void unlock_ranges(void) { __atomic_store_n(&ranges_lock, 0, __ATOMIC_RELEASE); }

void ch_arena_fork_prepare(void) { lock_ranges(); }
void ch_arena_fork_parent(void) { unlock_ranges(); }
void ch_arena_fork_child(void) { __atomic_store_n(&ranges_lock, 0, __ATOMIC_RELEASE); }

static size_t page_round(size_t size) { return (size + 4095) & ~(size_t)4095; }

void *ch_map(size_t size) {
  size = page_round(size);
  // MAP_NORESERVE sets a VMA flag that ordinary anonymous mappings lack, so the kernel
  // keeps these regions apart from malloc's in /proc/self/maps (subtraction below still
  // handles a merged line).
  void *start = mmap(NULL, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (start == MAP_FAILED) return NULL;
  lock_ranges();
  if (range_count < CH_MAX_RANGES) {
    ranges[range_count].start = (uintptr_t)start;
    ranges[range_count].end = (uintptr_t)start + size;
    range_count++;
    unlock_ranges();
    return start;
  }
  unlock_ranges();
  // Better no memory than unlisted memory that would show up as a holder.
  munmap(start, size);
  return NULL;
}

void ch_unmap(void *start, size_t size) {
  size = page_round(size);
  lock_ranges();
  for (size_t i = 0; i < range_count; i++) {
    if (ranges[i].start == (uintptr_t)start) {
      ranges[i] = ranges[--range_count];
      break;
    }
  }
  unlock_ranges();
  munmap(start, size);
}

size_t ch_excluded_ranges(uintptr_t *starts, uintptr_t *ends, size_t capacity) {
  lock_ranges();
  size_t n = range_count < capacity ? range_count : capacity;
  for (size_t i = 0; i < n; i++) {
    starts[i] = ranges[i].start;
    ends[i] = ranges[i].end;
  }
  unlock_ranges();
  return n;
}

struct ch_bump_chunk {
  struct ch_bump_chunk *next;
  size_t size, used;
};

void *ch_bump_alloc(ch_bump *bump, size_t size) {
  size = (size + 15) & ~(size_t)15;
  struct ch_bump_chunk *chunk = bump->chunks;
  size_t header = (sizeof(struct ch_bump_chunk) + 15) & ~(size_t)15;
  if (chunk == NULL || chunk->size - chunk->used < size) {
    size_t chunk_size = size + header > (4u << 20) ? size + header : (4u << 20);
    chunk = ch_map(chunk_size);
    if (chunk == NULL) return NULL;
    chunk->size = page_round(chunk_size);
    chunk->used = header;
    chunk->next = bump->chunks;
    bump->chunks = chunk;
  }
  void *result = (char *)chunk + chunk->used;
  chunk->used += size;
  return result;
}

size_t ch_resident_bytes(const void *start, size_t size) {
  uintptr_t first = (uintptr_t)start & ~(uintptr_t)4095;
  uintptr_t end = ((uintptr_t)start + size + 4095) & ~(uintptr_t)4095;
  // pagemap, not mincore: a page only ever read maps the shared zero page, which mincore
  // calls resident and the process's RSS does not count. A page of its own is present
  // (bit 63) and mapped by this process alone (bit 56).
  int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  uint64_t entries[512];
  size_t resident = 0;
  for (uintptr_t at = first; at < end;) {
    size_t count = (end - at) / 4096 < 512 ? (end - at) / 4096 : 512;
    ssize_t got = pread(fd, entries, count * sizeof(uint64_t), (off_t)(at / 4096 * 8));
    if (got <= 0) break;
    count = (size_t)got / sizeof(uint64_t);
    for (size_t i = 0; i < count; i++) {
      if ((entries[i] >> 63) & (entries[i] >> 56) & 1) resident += 4096;
    }
    at += count * 4096;
  }
  close(fd);
  return resident;
}

size_t ch_bump_resident(const ch_bump *bump) {
  size_t resident = 0;
  for (const struct ch_bump_chunk *chunk = bump->chunks; chunk; chunk = chunk->next) {
    resident += ch_resident_bytes(chunk, chunk->size);
  }
  return resident;
}

void ch_bump_reset(ch_bump *bump) {
  struct ch_bump_chunk *chunk = bump->chunks;
  while (chunk) {
    struct ch_bump_chunk *next = chunk->next;
    ch_unmap(chunk, chunk->size);
    chunk = next;
  }
  bump->chunks = NULL;
}

void *cholders_tool_memory(size_t size) { return size ? ch_map(size) : NULL; }

void cholders_tool_memory_free(void *memory, size_t size) {
  if (memory && size) ch_unmap(memory, size);
}
