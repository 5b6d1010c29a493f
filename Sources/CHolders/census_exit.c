// DEALLOCTRACE_LEAKS=1: the registry starts as the process loads (as DEALLOCTRACE_HOLDERS
// starts it), and a census runs at exit and prints its `leaks`-style text on stderr.
//
// The exit handler is registered here, at load, so it runs after every handler registered
// later, the recorder's included: when the recorder wrote the census into its log at the
// end of its session it says so (cholders_census_exit_done) and nothing more is printed.
// When DeallocTrace is linked, its `dealloctrace_census_at_exit` (a weak reference here, as
// CQueueRuntime reaches the recorder) runs the census so that objects waiting in a queue
// count as delayed; without it the census runs here with no queue knowledge. The exit
// status is never changed.
#define _GNU_SOURCE

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "census.h"

extern void dealloctrace_census_at_exit(void) __attribute__((weak));

static int requested;
static int exit_done;

int cholders_census_requested(void) { return requested; }
void cholders_census_exit_done(void) { __atomic_store_n(&exit_done, 1, __ATOMIC_RELEASE); }

static void write_all(const char *text) {
  size_t left = strlen(text);
  while (left > 0) {
    ssize_t n = write(2, text, left);
    if (n <= 0) return;
    text += n;
    left -= (size_t)n;
  }
}

static void census_at_exit(void) {
  if (__atomic_load_n(&exit_done, __ATOMIC_ACQUIRE)) return;
  if (dealloctrace_census_at_exit != NULL) {
    dealloctrace_census_at_exit();
    return;
  }
  char *text = NULL;
  char *json = cholders_census_json(NULL, "exit", &text);
  if (text) write_all(text);
  cholders_free(text);
  cholders_free(json);
}

__attribute__((constructor)) static void census_load(void) {
  const char *value = getenv("DEALLOCTRACE_LEAKS");
  if (value == NULL || value[0] == 0 || strcmp(value, "0") == 0) return;
  requested = 1;
  if (cholders_enable() != CHOLDERS_ON) {
    // The census at exit says why, in its one line.
  }
  atexit(census_at_exit);
}
