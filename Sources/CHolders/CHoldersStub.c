// Temporary stubs so that the other helpers can build against the header; replaced by the
// real implementation in the following commits.
#include "CHolders.h"

#include <stdlib.h>

int cholders_enable(void) { return CHOLDERS_OFF; }
int cholders_state(void) { return CHOLDERS_OFF; }
const char *cholders_problem(void) { return ""; }
int cholders_started_at_load(void) { return 0; }
uint64_t cholders_live_count(void) { return 0; }
char *cholders_scan_json(const uintptr_t *targets, size_t count, int max_depth, int max_paths) {
    (void)targets;
    (void)count;
    (void)max_depth;
    (void)max_paths;
    return NULL;
}
void cholders_free(char *json) { free(json); }
