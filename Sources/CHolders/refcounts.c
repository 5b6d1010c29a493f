// Reading an object's strong reference count the way the runtime keeps it (the layout is
// in internal.h), for the scan's accounting of who owns a target: through ch_read, so that
// an object freed meanwhile, or a garbage side-table pointer, costs a failed read instead of
// a fault. The runtime's swift_retainCount would dereference both.
#include "internal.h"

int64_t ch_strong_count(uintptr_t object) {
  uint64_t bits = 0;
  if (ch_read(&bits, object + 8, 8) != 8) return -1;
  if (CH_RC_SLOW(bits)) {
    if (CH_RC_IMMORTAL(bits)) return -1;
    uintptr_t side = CH_RC_SIDE_TABLE(bits);
    uint64_t entry[CH_SIDE_TABLE_REFCOUNTS / 8 + 1];
    if (ch_read(entry, side, sizeof entry) != sizeof entry) return -1;
    if (entry[0] != object) return -1;
    bits = entry[CH_SIDE_TABLE_REFCOUNTS / 8];
    if (CH_RC_SLOW(bits)) return -1;
  }
  if (bits & CH_RC_DEINITING) return -1;
  return (int64_t)CH_RC_STRONG_EXTRA(bits) + 1;
}
