#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include "CDeallocHooks.h"
#include "CTraceRuntime.h"
#include "ThreadState.h"

extern size_t swift_retainCount(const void *object);

void *ctrace_session_pointer = NULL;
void *ctrace_latest_session_pointer = NULL;
uint64_t ctrace_object_id_counter = 0;
void (*ctrace_test_before_enqueue_id_hook)(void) = NULL;

void (*ctrace_test_before_release_wait_hook)(void) = NULL;

void ctrace_set_test_before_enqueue_id(void (*hook)(void)) {
  __atomic_store_n(&ctrace_test_before_enqueue_id_hook, hook, __ATOMIC_RELAXED);
}

void ctrace_set_test_before_release_wait(void (*hook)(void)) {
  __atomic_store_n(&ctrace_test_before_release_wait_hook, hook, __ATOMIC_RELAXED);
}

void ctrace_set_current_session(void *session) {
  __atomic_store_n(&ctrace_session_pointer, session, __ATOMIC_SEQ_CST);
}

void ctrace_set_latest_session(void *session) {
  __atomic_store_n(&ctrace_latest_session_pointer, session, __ATOMIC_RELEASE);
}

static void after_fork_in_child(void) {
  // Only async-signal-safe work here: the child must stop tracing before it can touch
  // the parent's log, and the forking thread has a new id.
  __atomic_store_n(&cdeallochooks_recording_flag, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&ctrace_latest_session_pointer, NULL, __ATOMIC_RELAXED);
  ctrace_cached_thread_id = 0;
}

static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;
static void install_fork_handler_once(void) { pthread_atfork(NULL, NULL, after_fork_in_child); }
void ctrace_install_fork_handler(void) { pthread_once(&fork_handler_once, install_fork_handler_once); }

uint64_t ctrace_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

intptr_t ctrace_retain_count(const void *object) { return (intptr_t)swift_retainCount(object); }
