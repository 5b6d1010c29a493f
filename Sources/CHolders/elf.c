// ELF symbol tables of loaded objects, read from their files (CElf): the private adapter
// pointer in libswiftCore's .symtab (for the Swift 6.3 fix), and the data symbols that name a
// global holding an object.
//
// The symbolizer (CUnwind) reads the same files through the same reader, but keeps function
// symbols, in malloc memory; this keeps STT_OBJECT symbols with their sizes, in the arena.
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
  celf_symbol *symbols;  // sorted by value
  size_t count;
  struct module_symbols *next;
} module_symbols;

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static module_symbols *modules;
static ch_bump module_memory;

void ch_elf_fork_child(void) { pthread_mutex_init(&modules_lock, NULL); }

static void sort_symbols(celf_symbol *rows, size_t n) {
  // Insertion sort over runs would be slow for big tables; a plain heap sort keeps this
  // malloc-free and O(n log n).
  for (size_t start = n / 2; start-- > 0;) {
    size_t root = start;
    for (;;) {
      size_t child = root * 2 + 1;
      if (child >= n) break;
      if (child + 1 < n && rows[child + 1].value > rows[child].value) child++;
      if (rows[root].value >= rows[child].value) break;
      celf_symbol t = rows[root];
      rows[root] = rows[child];
      rows[child] = t;
      root = child;
    }
  }
  for (size_t end = n; end-- > 1;) {
    celf_symbol t = rows[0];
    rows[0] = rows[end];
    rows[end] = t;
    size_t root = 0;
    for (;;) {
      size_t child = root * 2 + 1;
      if (child >= end) break;
      if (child + 1 < end && rows[child + 1].value > rows[child].value) child++;
      if (rows[root].value >= rows[child].value) break;
      celf_symbol u = rows[root];
      rows[root] = rows[child];
      rows[child] = u;
      root = child;
    }
  }
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
  if (celf_map(path, &file)) {
    size_t count = celf_collect(&file, STT_OBJECT, CELF_SYMTAB_FIRST, NULL);
    celf_symbol *rows = count ? ch_bump_alloc(&module_memory, count * sizeof *rows) : NULL;
    if (rows) {
      m->count = celf_collect(&file, STT_OBJECT, CELF_SYMTAB_FIRST, rows);
      sort_symbols(rows, m->count);
      m->symbols = rows;
    } else {
      celf_unmap(&file);
    }
  }
  m->next = modules;
  modules = m;
  return m;
}

const char *ch_elf_object_symbol(const char *path, uintptr_t relative) {
  pthread_mutex_lock(&modules_lock);
  const char *found = NULL;
  module_symbols *m = load_module(path);
  if (m && m->count) {
    size_t low = SORTED_ROWS_AT_OR_BELOW(m->symbols, m->count, value, relative);
    // Symbols of one object may nest (aliases); look back a little for one that covers.
    for (size_t i = low; i-- > 0 && low - i < 8;) {
      const celf_symbol *s = &m->symbols[i];
      if (relative >= s->value && relative < s->value + (s->size ? s->size : 8)) {
        found = s->name;
        break;
      }
    }
  }
  pthread_mutex_unlock(&modules_lock);
  return found;
}
