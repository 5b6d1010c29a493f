// Holders across fork(): a child forked while another thread of its parent held one of the
// tool's locks (a scan holds the scan lock for milliseconds) would wait for it forever at
// its first scan, since that thread does not exist in the child.
//
// Why handlers rather than a fork generation checked at each lock: the hooks run on every
// allocation and release, and a generation check there costs every one of them; handlers
// cost only forks. What the prepare handler takes: the short locks (the registry's slab lock
// and the tool-memory list's lock, so that the child's tables are consistent; the naming
// lock, so that no fork lands inside the Swift runtime's own locks through a scan's naming;
// the loader walk's, so that none lands inside glibc's loader lock through a scan's walk of
// loaded objects), and the census lock, so that a fork waits for a census under way (census.c
// says why); never the scan lock, which would hold up a fork for a whole scan. The trade-off:
// a child forked mid-scan gets the scan lock reset and whatever that scan left half-written
// in its statistics, which the child's next scan overwrites.
//
// One set of handlers, installed when holders start: glibc skips the parent and child
// handlers of one registered while a fork runs its prepare handlers, so a census that
// registered its own at its first run could lock while another thread forked, and the child
// inherited that lock taken.
#define _GNU_SOURCE

#include <pthread.h>

#include "alloc_stacks.h"
#include "history.h"
#include "internal.h"

static void prepare(void) {
  // Lock order as elsewhere: the census lock first (a census takes all the others); then
  // the loader walk's (a walk may map tool memory: the ranges lock); naming is never held
  // while taking the others; the registry's slab lock is held while it maps memory.
  ch_census_fork_prepare();
  ch_maps_fork_prepare();
  ch_naming_fork_prepare();
  ch_alloc_stacks_fork_prepare();
  ch_history_fork_prepare();
  ch_registry_fork_prepare();
  ch_arena_fork_prepare();
}

static void parent(void) {
  ch_arena_fork_parent();
  ch_registry_fork_parent();
  ch_history_fork_parent();
  ch_alloc_stacks_fork_parent();
  ch_naming_fork_parent();
  ch_maps_fork_parent();
  ch_census_fork_after();
}

static void child(void) {
  ch_arena_fork_child();
  ch_registry_fork_child();
  ch_alloc_stacks_fork_child();
  ch_history_fork_child();
  ch_naming_fork_child();
  ch_scan_fork_child();
  ch_hooks_fork_child();
  ch_elf_fork_child();
  ch_maps_fork_child();
  ch_census_fork_after();
}

static pthread_once_t installed = PTHREAD_ONCE_INIT;
static void install(void) { pthread_atfork(prepare, parent, child); }
void ch_fork_handlers_install(void) { pthread_once(&installed, install); }
