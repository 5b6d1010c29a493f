#ifndef CUNWIND_H
#define CUNWIND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Captures up to `capacity` return addresses of the calling thread into `buffer`,
/// innermost first. Returns the number written (0 when unwinding fails).
/// The corresponding C function is libunwind's `unw_backtrace` (local-only fast path).
int cunwind_backtrace(void **buffer, int capacity);

/// The calling thread's OS thread id (`gettid`).
int64_t cunwind_thread_id(void);

#ifdef __cplusplus
}
#endif

#endif
