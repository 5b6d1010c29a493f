#ifndef CHOLDERS_EXTRAS_H
#define CHOLDERS_EXTRAS_H

// Additions beyond the shared contract (CHolders.h stays exactly as holders-spec.md says):
// diagnostics for tests and benchmarks.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Whether the runtime's own retain adapter had the Swift 6.3 masking bug (probed on a fake
/// object when holders were enabled): 1 yes, 0 no, -1 not probed (holders never enabled).
/// Either way the fixed adapter is what runs once holders are on.
int cholders_runtime_had_adapter_bug(void);

/// The calling thread's OS thread id (gettid), as the scan reports stack roots.
int64_t cholders_thread_id(void);

#ifdef __cplusplus
}
#endif

#endif
