#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "CUnwind.h"

int cunwind_backtrace(void **buffer, int capacity) {
    if (capacity <= 0) return 0;
    int n = unw_backtrace(buffer, capacity);
    return n < 0 ? 0 : n;
}

int64_t cunwind_thread_id(void) {
    return (int64_t)syscall(SYS_gettid);
}
