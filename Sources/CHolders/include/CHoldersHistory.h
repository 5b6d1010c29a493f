#ifndef CHOLDERS_HISTORY_PUBLIC_H
#define CHOLDERS_HISTORY_PUBLIC_H

// Retain/release history (DEALLOCTRACE_HISTORY=Type[,Type…]), for the recorder: what the
// side table holds of an object the recorder writes a finding for.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Return addresses kept per history event, innermost first.
#define CHOLDERS_HISTORY_STACK_DEPTH 32
/// The most events kept per object: past it, paired events are dropped (history.c).
#define CHOLDERS_HISTORY_EVENTS_PER_OBJECT 256

/// What an event is: a strong retain or release, the allocation (the first reference), a
/// hand-over to a DeallocQueue (the program's reference becomes the queue's), or an unowned
/// retain or release (unowned.c), which keeps the object's memory, never the object.
enum {
  CHOLDERS_HISTORY_RETAIN = 1,
  CHOLDERS_HISTORY_RELEASE = 2,
  CHOLDERS_HISTORY_ALLOC = 3,
  CHOLDERS_HISTORY_ENQUEUE = 4,
  CHOLDERS_HISTORY_UNOWNED_RETAIN = 5,
  CHOLDERS_HISTORY_UNOWNED_RELEASE = 6,
};

/// One event: `op` a CHOLDERS_HISTORY_ kind; `count_after` the strong count after it (-1:
/// unknown), which an unowned event leaves as it was; `stack` an id for
/// cholders_history_stack.
typedef struct {
  uint32_t op;
  int32_t count_after;
  uint32_t stack;
} cholders_history_event;

/// The DEALLOCTRACE_HISTORY patterns as read at enable time ("" when history is off).
const char *cholders_history_patterns(void);
/// Copies the history of the live object at `object`, oldest first, into `events` (at most
/// `capacity`); returns how many. `*dropped`: paired events the per-object cap dropped;
/// `*lost`: events not recorded because a table was full (both 0 when none).
size_t cholders_history_of(uintptr_t object, cholders_history_event *events, size_t capacity,
                           uint64_t *dropped, uint64_t *lost);
/// The return addresses of history stack `stack`, innermost first; how many (0: unknown).
size_t cholders_history_stack(uint32_t stack, uintptr_t *ips, size_t capacity);
/// Records the hand-over of the live object at `object` to a queue, with the enqueue stack
/// the recorder captured (`frames`, innermost first) and the strong count then; nothing when
/// its type is under no history.
void cholders_history_note_enqueue(uintptr_t object, const uintptr_t *frames, size_t count,
                                   int64_t count_after);
/// Types under history now (distinct metadata matched by a pattern), and those that matched
/// past CH_HISTORY_TYPES and so get none.
void cholders_history_type_counts(uint64_t *matched, uint64_t *over_cap);

#ifdef __cplusplus
}
#endif

#endif
