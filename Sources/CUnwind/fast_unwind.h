// The cached-rule unwinder (fast_unwind.c): started with libunwind's loading, tried before
// it. Not part of the public header.
#ifndef CUNWIND_FAST_UNWIND_H
#define CUNWIND_FAST_UNWIND_H

/// Maps the rule cache. Called once, with libunwind's loading.
void cunwind_fast_unwinder_start(void);

#endif
