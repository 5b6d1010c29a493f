// Synchronization.Mutex locks through libswiftSynchronization, which is not instrumented,
// so ThreadSanitizer does not see its happens-before edges and reports races on the state
// it protects. These annotations restate the edges. SwiftPM compiles this file with
// -fsanitize=thread in sanitized builds only; elsewhere the calls are empty.
#include "CSanitizer.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CSANITIZER_THREAD 1
#endif
#endif

#ifdef CSANITIZER_THREAD
void __tsan_acquire(void *address);
void __tsan_release(void *address);

void csanitizer_acquire(void *address) { __tsan_acquire(address); }
void csanitizer_release(void *address) { __tsan_release(address); }
#else
void csanitizer_acquire(void *address) { (void)address; }
void csanitizer_release(void *address) { (void)address; }
#endif
