// ELF symbol tables of loaded objects, read from their files (CElf): the private adapter
// pointer in libswiftCore's .symtab (for the Swift 6.3 fix), and the data symbols that name a
// global holding an object.
//
// The symbolizer (CUnwind) reads the same files into the same index (celf_symbol_index), but
// keeps function symbols, in malloc memory; this keeps STT_OBJECT symbols, in the arena.
// The files stay mapped (names point into them); their pages are not writable, so the scan
// never reads them.
#define _GNU_SOURCE

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "CElf.h"
#include "internal.h"

struct by_name {
  const char *name;
  uintptr_t value;
};

static int match_name(const ElfW(Sym) *symbol, const char *name, void *context) {
  struct by_name *query = context;
  if (strcmp(name, query->name) != 0) return 0;
  query->value = (uintptr_t)symbol->st_value;
  return 1;
}

uintptr_t ch_elf_symbol_value(const char *path, const char *name, int function) {
  celf_file file;
  if (!celf_map(path, &file)) return 0;
  struct by_name query = {name, 0};
  celf_each_symbol(&file, function ? STT_FUNC : STT_OBJECT, CELF_SYMTAB_FIRST, match_name,
                   &query);
  celf_unmap(&file);
  return query.value;
}

// ---- data symbols per loaded object, cached ----------------------------------------------

typedef struct module_symbols {
  const char *path;  // in the arena
  celf_symbol_index index;
  struct module_symbols *next;
} module_symbols;

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static module_symbols *modules;
static ch_bump module_memory;

void ch_elf_fork_child(void) { pthread_mutex_init(&modules_lock, NULL); }

static void *module_allocate(size_t size, void *context) {
  (void)context;
  return ch_bump_alloc(&module_memory, size);
}

static module_symbols *load_module(const char *path) {
  for (module_symbols *m = modules; m; m = m->next) {
    if (strcmp(m->path, path) == 0) return m;
  }
  module_symbols *m = ch_bump_alloc(&module_memory, sizeof *m);
  if (m == NULL) return NULL;
  memset(m, 0, sizeof *m);
  size_t length = strlen(path);
  char *copy = ch_bump_alloc(&module_memory, length + 1);
  if (copy == NULL) return NULL;
  memcpy(copy, path, length + 1);
  m->path = copy;
  celf_file file;
  if (celf_map(path, &file) && !celf_index_build(&m->index, &file, STT_OBJECT,
                                                 CELF_SYMTAB_FIRST, NULL, module_allocate, NULL)) {
    celf_unmap(&file);
  }
  m->next = modules;
  modules = m;
  return m;
}

/// How far a data symbol of unknown size (0) is taken to reach: one word.
#define UNKNOWN_DATA_SIZE sizeof(uintptr_t)
/// How many symbols below an address may cover it: data symbols nest (Swift's full type
/// metadata around its type metadata symbol).
#define DATA_NESTING 8

const char *ch_elf_object_symbol(const char *path, uintptr_t relative) {
  pthread_mutex_lock(&modules_lock);
  module_symbols *m = load_module(path);
  const celf_symbol *found =
      m ? celf_index_containing(&m->index, relative, UNKNOWN_DATA_SIZE, DATA_NESTING) : NULL;
  pthread_mutex_unlock(&modules_lock);
  return found ? found->name : NULL;
}
