#ifndef CTRACERUNTIME_THREADSTATE_H
#define CTRACERUNTIME_THREADSTATE_H

#include <stdint.h>

// Shared between ThreadState.c and the fork handler (Session.c), which resets it.
extern __thread int64_t ctrace_cached_thread_id;

#endif
