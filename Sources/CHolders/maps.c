// What to scan: the private writable mappings of /proc/self/maps, classified as a loaded
// object's data (.data/.bss: globals), a thread stack, or other heap memory; and a way to
// read them that cannot fault.
//
// Thread stacks are recognised two ways: a thread's stack pointer (from
// /proc/self/task/<tid>/syscall, available for threads blocked in a system call, which is
// what idle threads are) lies inside the mapping, which also gives the tid; or the mapping
// sits right above a PROT_NONE guard page, as glibc places every pthread stack. glibc's
// malloc arenas have their PROT_NONE reserve above the used part, and start on a 64 MB
// boundary, so they are not mistaken for stacks. AddressSanitizer's allocator maps each size
// class's blocks right above gigabytes of PROT_NONE reservation, at no such boundary: under
// ASan a guard page is one of at most LARGEST_GUARD bytes (glibc's default is one page).
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

/// Under AddressSanitizer, the largest PROT_NONE mapping taken for a thread stack's guard.
#define LARGEST_GUARD ((uintptr_t)1 << 20)

typedef struct {
  uintptr_t start, end;
  const char *path;
  uintptr_t base;
} module_segment;

typedef struct {
  ch_bump *bump;
  module_segment *rows;
  size_t count, capacity;
  char exe[4096];
} segment_query;

static int collect_segments(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  segment_query *q = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
    if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_W)) continue;
    if (q->count == q->capacity) return 1;
    const char *name = info->dlpi_name;
    if (name == NULL || name[0] == 0) name = q->exe;
    size_t length = strlen(name);
    char *copy = ch_bump_alloc(q->bump, length + 1);
    if (copy == NULL) return 1;
    memcpy(copy, name, length + 1);
    module_segment *row = &q->rows[q->count++];
    row->start = ((uintptr_t)info->dlpi_addr + segment->p_vaddr) & ~(uintptr_t)4095;
    row->end = ((uintptr_t)info->dlpi_addr + segment->p_vaddr + segment->p_memsz + 4095) &
               ~(uintptr_t)4095;
    row->path = copy;
    row->base = (uintptr_t)info->dlpi_addr;
  }
  return 0;
}

/// Reads a whole /proc file into tool memory (NUL-terminated); NULL on failure.
static char *read_proc(ch_bump *bump, const char *path, size_t *length) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  size_t capacity = 1 << 20, used = 0;
  char *text = ch_bump_alloc(bump, capacity);
  while (text) {
    if (used + 1 == capacity) {
      char *bigger = ch_bump_alloc(bump, capacity * 2);
      if (bigger) memcpy(bigger, text, used);
      text = bigger;
      capacity *= 2;
      if (!text) break;
    }
    ssize_t n = read(fd, text + used, capacity - 1 - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += (size_t)n;
  }
  close(fd);
  if (text) text[used] = 0;
  if (length) *length = used;
  return text;
}

typedef struct {
  uintptr_t sp;
  int64_t tid;
} thread_sp;

/// Stack pointers of the threads blocked in a system call (others read "running").
static int read_small(const char *path, char *text, size_t capacity) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, text, capacity - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = 0;
  return 1;
}

/// Parses "nr arg1 ... arg6 sp pc" (the 8th field is the stack pointer); 0 when the
/// thread is running (the file then reads "running") or the text is unexpected.
static uintptr_t stack_pointer_of(int64_t tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%lld/syscall", (long long)tid);
  char text[256];
  if (!read_small(path, text, sizeof text) || text[0] < '0' || text[0] > '9') return 0;
  char *cursor = text;
  for (int field = 0; field < 7 && cursor; field++) {
    cursor = strchr(cursor, ' ');
    if (cursor) cursor++;
  }
  return cursor ? (uintptr_t)strtoull(cursor, NULL, 16) : 0;
}

/// How many threads the process has now (the entries of /proc/self/task).
static size_t thread_count(void) {
  DIR *dir = opendir("/proc/self/task");
  if (dir == NULL) return 0;
  size_t n = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) n += entry->d_name[0] >= '0' && entry->d_name[0] <= '9';
  closedir(dir);
  return n;
}

/// Stack pointers of the threads blocked in a system call, in `rows` (bump memory sized
/// from the thread count, with room for threads started meanwhile; a thread started after
/// that room is full has no stack pointer, so its stack is known by its guard page alone).
/// A thread between system calls reads "running"; such threads are asked again twice, a
/// millisecond apart (idle pool threads and threads waiting on a lock are soon back in
/// one), so the whole wait is bounded by 2 ms however many threads run.
static size_t thread_stack_pointers(ch_bump *bump, thread_sp **out) {
  *out = NULL;
  size_t capacity = thread_count() + 64;
  thread_sp *rows = ch_bump_alloc(bump, capacity * sizeof(thread_sp));
  int64_t *pending = ch_bump_alloc(bump, capacity * sizeof(int64_t));
  DIR *dir = rows && pending ? opendir("/proc/self/task") : NULL;
  if (dir == NULL) return 0;
  *out = rows;
  size_t n = 0, running = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL && n + running < capacity) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    int64_t tid = strtoll(entry->d_name, NULL, 10);
    uintptr_t sp = stack_pointer_of(tid);
    if (sp) {
      rows[n].sp = sp;
      rows[n++].tid = tid;
    } else {
      pending[running++] = tid;
    }
  }
  closedir(dir);
  for (int round = 0; round < 2 && running > 0; round++) {
    usleep(1000);
    size_t still = 0;
    for (size_t i = 0; i < running && n < capacity; i++) {
      uintptr_t sp = stack_pointer_of(pending[i]);
      if (sp) {
        rows[n].sp = sp;
        rows[n++].tid = pending[i];
      } else {
        pending[still++] = pending[i];
      }
    }
    running = still;
  }
  return n;
}

static uintptr_t hex(const char **cursor) {
  uintptr_t value = 0;
  const char *p = *cursor;
  for (;; p++) {
    char c = *p;
    if (c >= '0' && c <= '9') {
      value = value * 16 + (uintptr_t)(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      value = value * 16 + (uintptr_t)(c - 'a' + 10);
    } else {
      break;
    }
  }
  *cursor = p;
  return value;
}

typedef struct {
  ch_region *rows;
  size_t count, capacity;
  ch_bump *bump;
  int incomplete;  // memory ran out: regions were left out
} region_list;

static void add(region_list *list, uintptr_t start, uintptr_t end, const ch_region *like) {
  if (start >= end) return;
  if (list->count == list->capacity) {
    // A process can have tens of thousands of mappings (vm.max_map_count): the list grows
    // rather than leave the rest unscanned.
    ch_region *larger = ch_bump_alloc(list->bump, 2 * list->capacity * sizeof(ch_region));
    if (larger == NULL) {
      list->incomplete = 1;
      return;
    }
    memcpy(larger, list->rows, list->count * sizeof(ch_region));
    list->rows = larger;
    list->capacity *= 2;
  }
  ch_region *row = &list->rows[list->count++];
  *row = *like;
  row->start = start;
  row->end = end;
  if (like->arena == 2) {
    // A thread arena's heap starts at a 64 MiB boundary. It is judged per piece: a tool
    // mapping placed right below it can share its line in /proc/self/maps (both are
    // MAP_NORESERVE), and is cut off before this.
    int aligned = (start & ((64u << 20) - 1)) == 0;
    row->arena = aligned ? 2 : 0;
    row->arena_start = aligned ? start : 0;
    row->arena_end = aligned ? end : 0;
  }
}

/// Adds [start, end) minus the tool's ranges.
static void add_minus_tool(region_list *list, uintptr_t start, uintptr_t end,
                           const ch_region *like, const uintptr_t *tool_starts,
                           const uintptr_t *tool_ends, size_t tool_count) {
  uintptr_t cursor = start;
  while (cursor < end) {
    // The nearest tool range that overlaps [cursor, end).
    uintptr_t cut_start = end, cut_end = end;
    for (size_t i = 0; i < tool_count; i++) {
      if (tool_ends[i] > cursor && tool_starts[i] < end && tool_starts[i] < cut_start) {
        cut_start = tool_starts[i] > cursor ? tool_starts[i] : cursor;
        cut_end = tool_ends[i];
      }
    }
    add(list, cursor, cut_start, like);
    cursor = cut_end;
  }
}

/// One line of /proc/self/maps: its range, permissions and path (not NUL-terminated).
typedef struct {
  uintptr_t start, end;
  char perms[5];
  const char *path;
  size_t path_length;
} maps_line;

static int path_is(const maps_line *m, const char *name) {
  size_t length = strlen(name);
  return m->path_length == length && memcmp(m->path, name, length) == 0;
}

static void parse_maps_line(const char *line, const char *line_end, maps_line *m) {
  const char *p = line;
  m->start = hex(&p);
  if (*p == '-') p++;
  m->end = hex(&p);
  if (*p == ' ') p++;
  memset(m->perms, 0, sizeof m->perms);
  for (int i = 0; i < 4 && p < line_end; i++) m->perms[i] = *p++;
  // The path is the text after the fifth field (address range, perms, offset, device,
  // inode; `p` is past the first two).
  const char *path = p;
  for (int field = 0; field < 3 && path < line_end; field++) {
    while (path < line_end && *path == ' ') path++;
    while (path < line_end && *path != ' ') path++;
  }
  while (path < line_end && *path == ' ') path++;
  m->path = path;
  m->path_length = (size_t)(line_end - path);
}

/// What every mapping is judged against: the loaded objects' writable segments, the threads'
/// stack pointers, the ranges that are the tool's (or AddressSanitizer's), and the list.
typedef struct {
  segment_query segments;
  thread_sp *sps;
  size_t sp_count;
  const uintptr_t *tool_starts, *tool_ends;
  size_t tool_count;
  int asan;
  uintptr_t own_stack, own_fake_stack;
  region_list list;
} region_scan;

/// Adds [start, end) of a mapping like `like`, split by the loaded objects' writable
/// segments (their globals, `CH_REGION_DATA`) unless it is a stack, minus the tool's ranges.
static void add_split_by_segments(region_scan *scan, uintptr_t start, uintptr_t end,
                                  const ch_region *like, int is_stack) {
  uintptr_t cursor = start;
  while (cursor < end) {
    const module_segment *hit = NULL;
    uintptr_t next_cut = end;
    for (size_t i = 0; i < scan->segments.count; i++) {
      const module_segment *s = &scan->segments.rows[i];
      if (s->start <= cursor && s->end > cursor) {
        hit = s;
        break;
      }
      if (s->start > cursor && s->start < next_cut) next_cut = s->start;
    }
    if (hit && !is_stack) {
      uintptr_t piece_end = hit->end < end ? hit->end : end;
      ch_region data = {0, 0, CH_REGION_DATA, -1, hit->path, hit->base, 0, 0, 0};
      add_minus_tool(&scan->list, cursor, piece_end, &data, scan->tool_starts, scan->tool_ends,
                     scan->tool_count);
      cursor = piece_end;
    } else {
      add_minus_tool(&scan->list, cursor, next_cut, like, scan->tool_starts, scan->tool_ends,
                     scan->tool_count);
      cursor = next_cut;
    }
  }
}

/// Whether the mapping `m` is memory the scan reads: private, readable and writable, no
/// kernel pseudo-mapping, not the scanning thread's own stack, not reserved address space.
static int is_scanned(const region_scan *scan, const maps_line *m) {
  int wanted = m->perms[0] == 'r' && m->perms[1] == 'w' && m->perms[3] == 'p';
  // Kernel pseudo-mappings ([vvar], [vsyscall], ...), not anonymous memory a program
  // named with PR_SET_VMA_ANON_NAME ("[anon:...]").
  int special = m->path_length > 0 && m->path[0] == '[' &&
                !(m->path_length > 6 && memcmp(m->path, "[anon:", 6) == 0) &&
                !path_is(m, "[stack]") && !path_is(m, "[heap]");
  int contains_own = (scan->own_stack >= m->start && scan->own_stack < m->end) ||
                     (scan->own_fake_stack >= m->start && scan->own_fake_stack < m->end);
  // A writable mapping larger than any heap this scan could read in time is reserved
  // address space (a sanitizer's shadow, a runtime's arena reservation), mostly never
  // touched: reading it would take hours, so it is left out.
  int reserved = m->end - m->start > CH_LARGEST_SCANNED_MAPPING;
  return wanted && !special && !contains_own && !reserved;
}

/// Adds the scanned parts of mapping `m`; `after_guard`: the mapping right below it is a
/// guard page (a thread stack's, when this one is anonymous).
static void add_mapping(region_scan *scan, const maps_line *m, int after_guard) {
  uintptr_t start = m->start;
  ch_region like = {0, 0, CH_REGION_HEAP, -1, NULL, 0, 0, 0, 0};
  // glibc's malloc heaps, the whole mapping, for the walk of their chunks (heap.c).
  if (path_is(m, "[heap]")) {
    like.arena = 1;
    like.arena_start = m->start;
    like.arena_end = m->end;
  } else if (m->path_length == 0) {
    like.arena = 2;  // maybe: see add()
  }
  int is_stack = path_is(m, "[stack]") ||
                 (m->path_length == 0 && after_guard && (start & ((64u << 20) - 1)) != 0);
  for (size_t i = 0; i < scan->sp_count; i++) {
    if (scan->sps[i].sp >= start && scan->sps[i].sp < m->end) {
      is_stack = 1;
      like.tid = scan->sps[i].tid;
      // Below the stack pointer (and its 128-byte red zone) lie only dead frames:
      // stale slots there are no holders.
      uintptr_t live = (scan->sps[i].sp - 128) & ~(uintptr_t)7;
      if (live > start) start = live;
    }
  }
  if (is_stack) like.kind = CH_REGION_STACK;
  add_split_by_segments(scan, start, m->end, &like, is_stack);
}

/// Held around the walk of loaded objects, and by the fork handlers: glibc's dl_iterate_phdr
/// holds the loader's write lock, which fork does not reset, so a child forked while a scan
/// walked would hang at its own first walk. With this, a fork waits for a walk (a few
/// microseconds); another thread's own dl_iterate_phdr or dlopen at a fork stays glibc's
/// hazard, as for any code that walks or loads in a forked child.
static pthread_mutex_t loader_walk = PTHREAD_MUTEX_INITIALIZER;

void ch_maps_fork_prepare(void) { pthread_mutex_lock(&loader_walk); }
void ch_maps_fork_parent(void) { pthread_mutex_unlock(&loader_walk); }

size_t ch_regions(ch_bump *bump, ch_region **out, uintptr_t own_stack, int *incomplete) {
  *out = NULL;
  *incomplete = 1;  // until the list is complete
  region_scan scan = {{bump, NULL, 0, 1024, {0}}, NULL, 0, NULL, NULL, 0, 0, own_stack, 0,
                      {NULL, 0, 8192, bump, 0}};
  segment_query *segments = &scan.segments;
  segments->rows = ch_bump_alloc(bump, segments->capacity * sizeof(module_segment));
  ssize_t exe_length = readlink("/proc/self/exe", segments->exe, sizeof segments->exe - 1);
  segments->exe[exe_length > 0 ? exe_length : 0] = 0;
  if (segments->rows) {
    pthread_mutex_lock(&loader_walk);
    dl_iterate_phdr(collect_segments, segments);
    pthread_mutex_unlock(&loader_walk);
  }
  scan.sp_count = thread_stack_pointers(bump, &scan.sps);

  // Tool memory, and AddressSanitizer's shadow (asan.c): none of it is the program's.
  static uintptr_t tool_starts[1025], tool_ends[1025];
  scan.tool_count = ch_excluded_ranges(tool_starts, tool_ends, 1024);
  scan.asan = ch_asan_shadow(&tool_starts[scan.tool_count], &tool_ends[scan.tool_count]);
  if (scan.asan) scan.tool_count++;
  scan.tool_starts = tool_starts;
  scan.tool_ends = tool_ends;
  scan.own_fake_stack = ch_asan_own_fake_stack();

  char *maps = read_proc(bump, "/proc/self/maps", NULL);
  if (maps == NULL) return 0;
  scan.list.rows = ch_bump_alloc(bump, scan.list.capacity * sizeof(ch_region));
  if (scan.list.rows == NULL) return 0;

  uintptr_t previous_end = 0;
  int previous_guard = 0;
  for (const char *line = maps; *line;) {
    const char *next = strchr(line, '\n');
    const char *line_end = next ? next : line + strlen(line);
    maps_line m;
    parse_maps_line(line, line_end, &m);
    if (is_scanned(&scan, &m)) add_mapping(&scan, &m, previous_guard && previous_end == m.start);
    previous_end = m.end;
    previous_guard = m.perms[0] == '-' && m.perms[1] == '-' && m.perms[2] == '-' &&
                     (!scan.asan || m.end - m.start <= LARGEST_GUARD);
    line = next ? next + 1 : line_end;
  }
  *out = scan.list.rows;
  *incomplete = scan.list.incomplete;
  return scan.list.count;
}

static int use_proc_mem = -1;
static int proc_mem_fd = -1;

/// In a forked child: an open /proc/self/mem is the parent's memory (the file is bound to
/// the process that opened it), and process_vm_readv is asked about the child's own pid.
void ch_maps_fork_child(void) {
  pthread_mutex_unlock(&loader_walk);
  if (proc_mem_fd >= 0) close(proc_mem_fd);
  proc_mem_fd = -1;
}

int ch_read_through_proc_mem(void) { return use_proc_mem == 1; }

size_t ch_read(void *local, uintptr_t remote, size_t length) {
  if (use_proc_mem < 0) {
    // CHOLDERS_TEST_PROC_MEM=1 starts with the fallback, as where process_vm_readv is
    // forbidden, so that tests reach it (no sandbox here forbids the call).
    const char *test = getenv("CHOLDERS_TEST_PROC_MEM");
    if (test && strcmp(test, "1") == 0) use_proc_mem = 1;
  }
  if (use_proc_mem != 1) {
    struct iovec to = {local, length};
    struct iovec from = {(void *)remote, length};
    ssize_t n = syscall(SYS_process_vm_readv, (long)getpid(), &to, 1UL, &from, 1UL, 0UL);
    if (n >= 0) {
      use_proc_mem = 0;
      return (size_t)n;
    }
    // Some sandboxes forbid process_vm_readv; /proc/self/mem also reports unreadable pages
    // as errors instead of faulting.
    if (errno != ENOSYS && errno != EPERM) return 0;
    use_proc_mem = 1;
  }
  if (proc_mem_fd < 0) proc_mem_fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
  if (proc_mem_fd < 0) return 0;
  ssize_t n = pread(proc_mem_fd, local, length, (off_t)remote);
  return n > 0 ? (size_t)n : 0;
}
