#ifndef SORTED_ROWS_H
#define SORTED_ROWS_H

// The one binary search of the C targets (CElf, CUnwind, CHolders): every table they search
// is an array of rows sorted by an address-sized key, and every question is "which rows
// start at or below this address".

#include <stddef.h>
#include <stdint.h>

/// How many of the `count` rows at `rows` (each `stride` bytes, sorted by the unsigned key of
/// `key_size` bytes, 4 or 8, at `key_offset` in each) have a key at or below `key`: the
/// index of the first row above it. Inline, so that a constant stride, offset and size
/// compile to a plain loop (the holder scan asks once per word it reads).
static inline size_t sorted_rows_at_or_below(const void *rows, size_t count, size_t stride,
                                             size_t key_offset, size_t key_size,
                                             uintptr_t key) {
  const unsigned char *base = (const unsigned char *)rows + key_offset;
  size_t low = 0, high = count;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    const void *at = base + middle * stride;
    uintptr_t here = key_size == 4 ? *(const uint32_t *)at : *(const uintptr_t *)at;
    if (here <= key) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

/// `sorted_rows_at_or_below` over an array of structs (or of integers, with `field` empty
/// of meaning: use the function) sorted by `field`.
#define SORTED_ROWS_AT_OR_BELOW(array, count, field, key)                                    \
  sorted_rows_at_or_below((array), (count), sizeof *(array),                                 \
                          offsetof(__typeof__(*(array)), field), sizeof((array)->field), (key))

#endif
