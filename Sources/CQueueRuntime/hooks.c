#include "CDeallocHooks.h"

#include <stddef.h>

int cdeallochooks_recording_flag = 0;
void *cdeallochooks_hooks_pointer = NULL;

// Defined by DeallocTrace (`@_cdecl`). Weak, so that the queue links without the recorder:
// the recorder cannot register itself before the first queue exists (Swift has no load-time
// initializers), and this reference is what lets `DEALLOCTRACE_LOG` work with no code change.
extern void dealloctrace_start_from_environment(void) __attribute__((weak));

void cdeallochooks_set_recording(int on) {
  __atomic_store_n(&cdeallochooks_recording_flag, on, __ATOMIC_RELEASE);
}

int cdeallochooks_install(void *hooks) {
  void *expected = NULL;
  return __atomic_compare_exchange_n(&cdeallochooks_hooks_pointer, &expected, hooks, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void cdeallochooks_start_recorder_from_environment(void) {
  if (dealloctrace_start_from_environment != NULL) dealloctrace_start_from_environment();
}
