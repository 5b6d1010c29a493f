#define _GNU_SOURCE

#include "CElf.h"

static int before(const celf_symbol *a, const celf_symbol *b) {
  return a->value != b->value ? a->value < b->value : a->order < b->order;
}

/// Restores the max-heap property of `rows[0..<count]` below `root`.
static void sift_down(celf_symbol *rows, size_t root, size_t count) {
  for (;;) {
    size_t child = root * 2 + 1;
    if (child >= count) return;
    if (child + 1 < count && before(&rows[child], &rows[child + 1])) child++;
    if (!before(&rows[root], &rows[child])) return;
    celf_symbol swap = rows[root];
    rows[root] = rows[child];
    rows[child] = swap;
    root = child;
  }
}

size_t celf_index_sort(celf_symbol *rows, size_t count) {
  // A heap sort: no memory of its own, so an arena's caller stays off malloc. The key
  // (value, walk order) is unique, so the unstable sort still has one result.
  for (size_t start = count / 2; start-- > 0;) sift_down(rows, start, count);
  for (size_t end = count; end-- > 1;) {
    celf_symbol swap = rows[0];
    rows[0] = rows[end];
    rows[end] = swap;
    sift_down(rows, 0, end);
  }
  size_t kept = 0;
  for (size_t i = 0; i < count; i++) {
    if (kept > 0 && rows[kept - 1].value == rows[i].value) {
      // Aliases: the name is the first in walk order; the extent the largest any states.
      if (rows[i].size > rows[kept - 1].size) rows[kept - 1].size = rows[i].size;
      continue;
    }
    rows[kept++] = rows[i];
  }
  return kept;
}

int celf_index_build(celf_symbol_index *index, const celf_file *file, int type,
                     celf_table_order order, celf_symbol_filter keep,
                     celf_allocator allocate, void *context) {
  index->rows = NULL;
  index->count = 0;
  size_t count = celf_collect(file, type, order, NULL);
  celf_symbol *rows = count ? allocate(count * sizeof *rows, context) : NULL;
  if (rows == NULL) return 0;
  size_t filled = celf_collect(file, type, order, rows);
  size_t kept = 0;
  for (size_t i = 0; i < filled; i++) {
    if (keep == NULL || keep(rows[i].name)) rows[kept++] = rows[i];
  }
  index->rows = rows;
  index->count = celf_index_sort(rows, kept);
  return 1;
}

const celf_symbol *celf_index_at_or_below(const celf_symbol_index *index, uintptr_t value) {
  size_t above = SORTED_ROWS_AT_OR_BELOW(index->rows, index->count, value, value);
  return above == 0 ? NULL : &index->rows[above - 1];
}

const celf_symbol *celf_index_containing(const celf_symbol_index *index, uintptr_t value,
                                         size_t unknown_size_reach, size_t nesting) {
  size_t above = SORTED_ROWS_AT_OR_BELOW(index->rows, index->count, value, value);
  for (size_t i = above; i-- > 0 && above - i <= nesting;) {
    const celf_symbol *row = &index->rows[i];
    size_t reach = row->size ? row->size : unknown_size_reach;
    if (value - row->value < reach) return row;
  }
  return NULL;
}
