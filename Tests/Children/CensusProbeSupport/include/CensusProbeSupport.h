#ifndef CENSUS_PROBE_SUPPORT_H
#define CENSUS_PROBE_SUPPORT_H

#include <stdint.h>

/// Blocks in read(2) on `fd` while the object at `hidden ^ key` is held in a callee-saved
/// register (r12) and nowhere else: not on this thread's stack, not in memory. A census
/// sees it only through the registers it makes the kernel save. x86_64 only; elsewhere it
/// just reads.
long census_probe_read_holding_in_register(uintptr_t hidden, uintptr_t key, int fd);

/// Zeroes 16 KiB of this thread's stack below the caller: the dead frames that held an
/// address (the allocation's, the retain's) no longer read as references to it.
void census_probe_scrub_stack(void);

#endif
