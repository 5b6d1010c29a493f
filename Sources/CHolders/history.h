// Retain/release history (DEALLOCTRACE_HISTORY=Type[,Type…]): every strong and unowned
// retain and release of the objects of the named types, with a stack and the strong count
// after it, kept beside the registry (history.c says how and what it costs). Not part of any
// public header.
#ifndef CHOLDERS_HISTORY_H
#define CHOLDERS_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "CHoldersExtras.h"
#include "CHoldersHistory.h"

/// The most distinct metadata (a generic class has one per instantiation) whose objects get a
/// history; the types matched past it get none, and the count says so.
#define CH_HISTORY_TYPES 16

/// How many metadata matched a pattern, and which: the hot path's test. While no type
/// matched, a retain or release pays one load of this count; afterwards, one load of the
/// object's metadata and a compare per matched type.
extern uint32_t ch_history_type_count;
extern uintptr_t ch_history_types[CH_HISTORY_TYPES];
/// 1 once DEALLOCTRACE_HISTORY named at least one pattern and the tables are mapped.
extern int ch_history_on;

/// Whether the object at `object` (a live Swift heap object) is of a type under history.
static inline int ch_history_wants(uintptr_t object) {
  uint32_t count = __atomic_load_n(&ch_history_type_count, __ATOMIC_ACQUIRE);
  if (__builtin_expect(count == 0, 1)) return 0;
  uintptr_t metadata = *(const uintptr_t *)object;
  for (uint32_t i = 0; i < count; i++) {
    if (ch_history_types[i] == metadata) return 1;
  }
  return 0;
}

/// Reads DEALLOCTRACE_HISTORY and, when it names a pattern, maps the tables and loads the
/// unwinder. Called once while holders are enabled, before the hooks are installed.
void ch_history_start(void);
/// Decides, once per metadata, whether its type's name matches a pattern (the allocation
/// hook calls it for each metadata it has not just seen on this thread).
void ch_history_note_type(uintptr_t metadata);

enum {
  CH_HISTORY_RETAIN = CHOLDERS_HISTORY_RETAIN,
  CH_HISTORY_RELEASE = CHOLDERS_HISTORY_RELEASE,
  CH_HISTORY_ALLOC = CHOLDERS_HISTORY_ALLOC,
  CH_HISTORY_ENQUEUE = CHOLDERS_HISTORY_ENQUEUE,
  CH_HISTORY_UNOWNED_RETAIN = CHOLDERS_HISTORY_UNOWNED_RETAIN,
  CH_HISTORY_UNOWNED_RELEASE = CHOLDERS_HISTORY_UNOWNED_RELEASE,
};
/// The strong count of the live object at `object` for a history event: -1 for an immortal
/// or deiniting object, whose events are not recorded (hooks.c).
int64_t ch_history_count(uintptr_t object);
/// Records `op` on `object` with the strong count after it, and the stack from `caller` out:
/// the hook's own return address (`__builtin_return_address(0)` in the hook), where the
/// program's frames begin.
void ch_history_record(uintptr_t object, int op, int64_t count_after, uintptr_t caller);
/// Drops `object`'s history (its final release).
void ch_history_forget(uintptr_t object);

void ch_history_fork_prepare(void);
void ch_history_fork_parent(void);
void ch_history_fork_child(void);

#endif
