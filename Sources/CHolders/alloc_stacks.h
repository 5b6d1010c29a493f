// Allocation stacks (DEALLOCTRACE_ALLOC_STACKS=1): where each live Swift object was
// allocated, kept beside the registry for the census's leaked objects (alloc_stacks.c says
// how and what it costs). Not part of any public header.
#ifndef CHOLDERS_ALLOC_STACKS_H
#define CHOLDERS_ALLOC_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "CHoldersExtras.h"

/// Return addresses kept per allocation, innermost first, from the function that called
/// swift_allocObject (the hook's own frames left out).
#define CH_ALLOC_STACK_DEPTH CHOLDERS_ALLOC_STACK_DEPTH

/// 1 once DEALLOCTRACE_ALLOC_STACKS turned allocation stacks on (read by the hooks: the
/// only cost when off is this test).
extern int ch_alloc_stacks_on;

/// Reads DEALLOCTRACE_ALLOC_STACKS and, when set, maps the tables and loads the unwinder.
/// Called once while holders are enabled, before the hooks are installed.
void ch_alloc_stacks_start(void);
/// One allocation in this many gets a stack: DEALLOCTRACE_ALLOC_STACKS=N (1 records all).
extern uint32_t ch_alloc_stacks_sample_every;

/// Records where `object` was allocated: called by the allocation hook, which is the frame
/// this function's caller-relative unwind starts above.
void ch_alloc_stacks_record(uintptr_t object);
/// Drops `object`'s entry (its final release).
void ch_alloc_stacks_forget(uintptr_t object);
/// Copies `object`'s allocation stack into `ips` (at most `capacity`); returns how many
/// (0: none recorded for it).
size_t ch_alloc_stacks_lookup(uintptr_t object, uintptr_t *ips, size_t capacity);

void ch_alloc_stacks_fork_prepare(void);
void ch_alloc_stacks_fork_parent(void);
void ch_alloc_stacks_fork_child(void);

#endif
