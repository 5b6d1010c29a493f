// Symbolization for the writer thread: which loaded object holds an address, and the
// nearest function symbol at or below it, from the object's own ELF symbol tables.
//
// Why not libunwind's `unw_get_proc_name`: in libunwind 1.6.2 every call re-reads
// /proc/self/maps, maps the whole ELF file, scans its symbol tables linearly and unmaps it
// again; measured here at 230-250 us per address in libswiftCore or libFoundation (75 us in
// libc), so a batch with a few new 32-frame stacks blew the writer's flush interval. Here
// each object's function symbols are read once, sorted, and kept: a lookup is one
// `dl_iterate_phdr` and a binary search. The rule is libunwind's, so names stay the same:
// STT_FUNC symbols of `.symtab` and `.dynsym`, the nearest one at or below the address,
// with one correction: an address past the end of that symbol (`st_size`) gets no name.
// A stripped library (libc) keeps only its exported symbols, and the nearest one below a
// static function is a neighbour: `__libc_start_call_main` showed as `__libc_init_first`.
// Without a name the frame still has `mod` and `off`, which `llvm-symbolizer` (or a
// reader) resolves properly; a wrong name is worse than none.
#define _GNU_SOURCE

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "CElf.h"
#include "CUnwind.h"

/// From libswiftCore, which every Swift program links.
extern char *swift_demangle(const char *mangled, size_t length, char *out_buffer,
                            size_t *out_buffer_size, uint32_t flags);

struct object_symbols {
  char *path;
  uintptr_t base;
  celf_symbol_index functions;
  celf_symbol_index anonymous;  // the anonymous context descriptors (`…MXX`)
  struct object_symbols *next;
};

// The writer thread is the only caller, but a stuck writer of a finished session may still
// run while the next session's writer starts: one lock keeps the cache whole.
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct object_symbols *cache = NULL;

static void *allocate(size_t size, void *context) {
  (void)context;
  return malloc(size);
}

/// Whether `name` is an anonymous context descriptor's (`$s…MXX`): the context of a type
/// declared inside a function, which the runtime names only by its address.
static int is_anonymous_descriptor(const char *name) {
  size_t length = strlen(name);
  return length > 3 && strcmp(name + length - 3, "MXX") == 0;
}

/// Reads the function symbols of the ELF file at `path` (mapped for good when any index
/// holds its names), and its anonymous context descriptors (none when out of memory: their
/// types keep the runtime's name). Section order: the order libunwind's linear scan settles
/// aliases by.
static void read_symbols(struct object_symbols *object) {
  celf_file file;
  if (!celf_map(object->path, &file)) return;
  int anonymous = celf_index_build(&object->anonymous, &file, STT_OBJECT, CELF_SECTION_ORDER,
                                   is_anonymous_descriptor, allocate, NULL);
  int functions = celf_index_build(&object->functions, &file, STT_FUNC, CELF_SECTION_ORDER,
                                   NULL, allocate, NULL);
  if (!anonymous && !functions) celf_unmap(&file);
}

static struct object_symbols *symbols_of(const char *path, uintptr_t base) {
  for (struct object_symbols *object = cache; object; object = object->next) {
    if (object->base == base && strcmp(object->path, path) == 0) return object;
  }
  struct object_symbols *object = calloc(1, sizeof *object);
  if (object == NULL) return NULL;
  object->path = strdup(path);
  object->base = base;
  if (object->path == NULL) {
    free(object);
    return NULL;
  }
  read_symbols(object);
  object->next = cache;
  cache = object;
  return object;
}

/// The nearest function symbol at or below `relative` that contains it, or NULL. A symbol
/// of unknown size (0: hand-written assembly) is taken to reach the next one, as libunwind
/// does.
static const char *nearest(const struct object_symbols *object, uintptr_t relative) {
  const celf_symbol *symbol = celf_index_containing(&object->functions, relative, SIZE_MAX, 1);
  return symbol ? symbol->name : NULL;
}

/// The C++ ABI's demangler (`abi::__cxa_demangle`), looked up in the process instead of
/// linked: libstdc++ is loaded in every Swift process (the runtime and libdispatch use it),
/// and the recorder adds no dependency for it. NULL when no library provides it.
typedef char *(*cxa_demangle_function)(const char *, char *, size_t *, int *);
static cxa_demangle_function cxa_demangle = NULL;
static pthread_once_t cxa_demangle_once = PTHREAD_ONCE_INIT;
static void find_cxa_demangle(void) {
  cxa_demangle = (cxa_demangle_function)dlsym(RTLD_DEFAULT, "__cxa_demangle");
}

/// `mangled` demangled as a Swift name, else as a C++ name (`_Z…`), else NULL. The result
/// is the caller's to `free`.
static char *demangle(const char *mangled) {
  char *swift = swift_demangle(mangled, strlen(mangled), NULL, NULL, 0);
  if (swift) return swift;
  if (mangled[0] != '_' || mangled[1] != 'Z') return NULL;
  pthread_once(&cxa_demangle_once, find_cxa_demangle);
  if (cxa_demangle == NULL) return NULL;
  int status = 0;
  char *cxx = cxa_demangle(mangled, NULL, NULL, &status);
  if (status != 0) {
    free(cxx);
    return NULL;
  }
  return cxx;
}

struct object_query {
  uintptr_t ip;
  char *path;
  size_t capacity;
  uintptr_t base;
  int found;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct object_query *query = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
    if (segment->p_type != PT_LOAD) continue;
    uintptr_t start = (uintptr_t)info->dlpi_addr + segment->p_vaddr;
    if (query->ip >= start && query->ip < start + segment->p_memsz) {
      const char *name = info->dlpi_name;
      if (name == NULL || name[0] == 0) {
        ssize_t n = readlink("/proc/self/exe", query->path, query->capacity - 1);
        query->path[n > 0 ? n : 0] = 0;
      } else {
        strncpy(query->path, name, query->capacity - 1);
        query->path[query->capacity - 1] = 0;
      }
      query->base = (uintptr_t)info->dlpi_addr;
      query->found = 1;
      return 1;
    }
  }
  return 0;
}

int cunwind_describe_address(uintptr_t ip, char *module, size_t module_capacity,
                             uintptr_t *base, char *symbol, size_t symbol_capacity) {
  if (module_capacity == 0 || symbol_capacity == 0) return 0;
  module[0] = 0;
  symbol[0] = 0;
  *base = 0;
  struct object_query query = {ip, module, module_capacity, 0, 0};
  dl_iterate_phdr(find_object, &query);
  if (!query.found) return 0;
  *base = query.base;
  int result = CUNWIND_FOUND_MODULE;
  pthread_mutex_lock(&cache_lock);
  const struct object_symbols *object = symbols_of(module, query.base);
  const char *mangled = object ? nearest(object, ip - query.base) : NULL;
  if (mangled) {
    char *demangled = demangle(mangled);
    const char *chosen = demangled ? demangled : mangled;
    strncpy(symbol, chosen, symbol_capacity - 1);
    symbol[symbol_capacity - 1] = 0;
    free(demangled);
    result |= CUNWIND_FOUND_SYMBOL;
  }
  pthread_mutex_unlock(&cache_lock);
  return result;
}

int cunwind_name_anonymous_context(uintptr_t address, char *name, size_t capacity) {
  if (capacity == 0) return 0;
  name[0] = 0;
  char module[4096];
  struct object_query query = {address, module, sizeof module, 0, 0};
  dl_iterate_phdr(find_object, &query);
  if (!query.found) return 0;
  int found = 0;
  pthread_mutex_lock(&cache_lock);
  const struct object_symbols *object = symbols_of(module, query.base);
  const celf_symbol *symbol =
      object ? celf_index_at_or_below(&object->anonymous, address - query.base) : NULL;
  if (symbol && symbol->value == address - query.base) {
    char *demangled = swift_demangle(symbol->name, strlen(symbol->name), NULL, NULL, 0);
    if (demangled) {
      strncpy(name, demangled, capacity - 1);
      name[capacity - 1] = 0;
      free(demangled);
      found = 1;
    }
  }
  pthread_mutex_unlock(&cache_lock);
  return found;
}

struct build_id_query {
  uintptr_t ip;
  char *hex;
  size_t capacity;
  int found;
};

static int find_build_id(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct build_id_query *query = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
    if (segment->p_type != PT_LOAD) continue;
    uintptr_t start = (uintptr_t)info->dlpi_addr + segment->p_vaddr;
    if (query->ip >= start && query->ip < start + segment->p_memsz) {
      query->found = celf_loaded_build_id((uintptr_t)info->dlpi_addr, info->dlpi_phdr,
                                          (size_t)info->dlpi_phnum, query->hex, query->capacity);
      return 1;
    }
  }
  return 0;
}

int cunwind_build_id(uintptr_t ip, char *hex, size_t capacity) {
  struct build_id_query query = {ip, hex, capacity, 0};
  dl_iterate_phdr(find_build_id, &query);
  return query.found;
}
