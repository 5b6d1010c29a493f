// The census's rows: every registered object, numbered densely in address order, read from
// the registry's span bitmaps instead of copied out as a row per object.
//
// Why: a snapshot row (address, metadata, size) costs 24 bytes per object, more than all
// the census's other per-object memory together. The registry already keeps one bit per
// 16-byte granule; the census copies the words of each span between its first and last
// object (a page of the registry's bitmap with no bit set is left unwritten, so it costs
// nothing), with a 32-bit count of the rows before every 8th word. A row's number is then
// that count plus the bits below it (rank), and a row's address is found by a binary search
// over those counts (select). For 128-byte objects that is about one byte per object. The
// copy, not the registry itself, because the census still uses row numbers once the other
// threads run again and allocate.
//
// The trade-off: the copy costs what the registry's bitmap costs over the same range, so a
// heap whose objects are few and far apart (one per KiB) pays up to 8 bytes of copy per
// object; a row's address is a search, not a load (the passes that visit every row walk
// the bits in order instead).
#define _GNU_SOURCE

#include <string.h>

#include "census.h"

#define WORDS_PER_PAGE (4096 / sizeof(uint64_t))
#define SPAN_BYTES ((uintptr_t)1 << CH_REGISTRY_SPAN_SHIFT)

/// The last span whose first address is at or below `address`, or -1.
static ptrdiff_t span_at_or_below(const ch_rows *r, uintptr_t address) {
  return (ptrdiff_t)SORTED_ROWS_AT_OR_BELOW(r->spans, r->span_count, base, address) - 1;
}

int ch_rows_build(ch_rows *r, ch_bump *bump) {
  memset(r, 0, sizeof *r);
  uint32_t *list = NULL;
  size_t listed = ch_registry_sorted_spans(bump, &list);
  if (list == NULL) return 0;
  r->spans = ch_bump_alloc(bump, (listed + 1) * sizeof(ch_row_span));
  if (r->spans == NULL) return 0;
  size_t rows = 0;
  for (size_t i = 0; i < listed; i++) {
    const uint64_t *bitmap = ch_registry_bitmap(list[i]);
    if (bitmap == NULL) continue;
    size_t first = CH_REGISTRY_BITMAP_WORDS, last = 0;
    for (size_t w = 0; w < CH_REGISTRY_BITMAP_WORDS; w++) {
      if (__atomic_load_n(&bitmap[w], __ATOMIC_RELAXED) == 0) continue;
      if (first == CH_REGISTRY_BITMAP_WORDS) first = w;
      last = w;
    }
    if (first == CH_REGISTRY_BITMAP_WORDS) continue;
    first &= ~(size_t)7;  // blocks of 8 words start at a multiple of 8
    size_t words = last + 1 - first;
    ch_row_span *span = &r->spans[r->span_count];
    span->base = ((uintptr_t)list[i] << CH_REGISTRY_SPAN_SHIFT) +
                 (first << (CH_REGISTRY_GRANULE_SHIFT + 6));
    span->words = (uint32_t)words;
    span->bits = ch_bump_alloc(bump, words * sizeof(uint64_t));
    span->block_rows = ch_bump_alloc(bump, ((words + 7) / 8) * sizeof(uint32_t));
    if (span->bits == NULL || span->block_rows == NULL) return 0;
    span->first_row = rows;
    for (size_t w = 0; w < words; w++) {
      if (w % 8 == 0) span->block_rows[w / 8] = (uint32_t)rows;
      uint64_t bits = __atomic_load_n(&bitmap[first + w], __ATOMIC_RELAXED);
      // Bump memory is zero until written: an empty word is left unwritten, so a page of
      // the copy that only empty words fall on is never touched.
      if (bits == 0) continue;
      span->bits[w] = bits;
      rows += (size_t)__builtin_popcountll(bits);
    }
    if (rows > INT32_MAX - 2) return 0;  // rows are int32_t (edges keep -(row + 2))
    span->end_row = rows;
    r->span_count++;
  }
  r->count = rows;
  if (rows > 0) {
    r->low = ch_row_address(r, 0);
    r->high = ch_row_address(r, rows - 1);
  }
  return 1;
}

size_t ch_rows_at_or_below(const ch_rows *r, uintptr_t address) {
  ptrdiff_t s = span_at_or_below(r, address);
  if (s < 0) return 0;
  const ch_row_span *span = &r->spans[s];
  uintptr_t granule = (address - span->base) >> CH_REGISTRY_GRANULE_SHIFT;
  size_t word = (size_t)(granule >> 6);
  if (word >= span->words) return span->end_row;
  size_t count = span->block_rows[word / 8];
  for (size_t w = word & ~(size_t)7; w < word; w++) {
    count += (size_t)__builtin_popcountll(span->bits[w]);
  }
  uint64_t at_or_below = (2ull << (granule & 63)) - 1;  // bit 63: all ones
  return count + (size_t)__builtin_popcountll(span->bits[word] & at_or_below);
}

int32_t ch_rows_exact(const ch_rows *r, uintptr_t key) {
  if (key < r->low || key > r->high || (key & 15)) return -1;
  ptrdiff_t s = span_at_or_below(r, key);
  if (s < 0) return -1;
  const ch_row_span *span = &r->spans[s];
  uintptr_t granule = (key - span->base) >> CH_REGISTRY_GRANULE_SHIFT;
  size_t word = (size_t)(granule >> 6);
  if (word >= span->words || !((span->bits[word] >> (granule & 63)) & 1)) return -1;
  size_t count = span->block_rows[word / 8];
  for (size_t w = word & ~(size_t)7; w < word; w++) {
    count += (size_t)__builtin_popcountll(span->bits[w]);
  }
  uint64_t below = (1ull << (granule & 63)) - 1;
  return (int32_t)(count + (size_t)__builtin_popcountll(span->bits[word] & below));
}

uintptr_t ch_row_address(const ch_rows *r, size_t row) {
  // The last span whose first row is at or below `row` (the first span when none is).
  size_t spans = SORTED_ROWS_AT_OR_BELOW(r->spans, r->span_count, first_row, row);
  const ch_row_span *span = &r->spans[spans > 0 ? spans - 1 : 0];
  // The last block of 8 words whose first row is at or below `row` (the first when none is).
  size_t blocks = (span->words + 7) / 8;
  size_t b = sorted_rows_at_or_below(span->block_rows, blocks, sizeof *span->block_rows, 0,
                                     sizeof *span->block_rows, row);
  b = b > 0 ? b - 1 : 0;
  size_t left = row - span->block_rows[b];
  for (size_t w = b * 8; w < span->words; w++) {
    uint64_t bits = span->bits[w];
    size_t here = (size_t)__builtin_popcountll(bits);
    if (left >= here) {
      left -= here;
      continue;
    }
    for (; left > 0; left--) bits &= bits - 1;
    uintptr_t granule = w * 64 + (uintptr_t)__builtin_ctzll(bits);
    return span->base + (granule << CH_REGISTRY_GRANULE_SHIFT);
  }
  return 0;  // past the last row: never asked
}

uintptr_t ch_row_cursor_next(ch_row_cursor *k) {
  const ch_rows *r = k->rows;
  while (k->bits == 0) {
    if (k->span >= r->span_count) return 0;
    const ch_row_span *span = &r->spans[k->span];
    if (k->word >= span->words) {
      k->span++;
      k->word = 0;
      continue;
    }
    k->bits = span->bits[k->word++];
  }
  const ch_row_span *span = &r->spans[k->span];
  uintptr_t granule = (uintptr_t)(k->word - 1) * 64 + (uintptr_t)__builtin_ctzll(k->bits);
  k->bits &= k->bits - 1;
  return span->base + (granule << CH_REGISTRY_GRANULE_SHIFT);
}

void ch_row_cursor_at(ch_row_cursor *k, const ch_rows *r, size_t row) {
  memset(k, 0, sizeof *k);
  k->rows = r;
  if (row >= r->count) {
    k->span = r->span_count;
    return;
  }
  uintptr_t address = ch_row_address(r, row);
  ptrdiff_t s = span_at_or_below(r, address);
  const ch_row_span *span = &r->spans[s];
  uintptr_t granule = (address - span->base) >> CH_REGISTRY_GRANULE_SHIFT;
  k->span = (size_t)s;
  k->word = (uint32_t)(granule >> 6) + 1;
  k->bits = span->bits[granule >> 6] & ~((1ull << (granule & 63)) - 1);
}
