// The address space the recorder may take: the limit (`ulimit -v`), what is mapped, and a
// thread of its own with a small stack.
//
// Why: RLIMIT_AS counts every mapping, reserved or touched, and a thread's default stack
// reserves 8 MiB of it (RLIMIT_STACK). Under a limit of some tens of MiB, the recorder's
// writer thread and buffers took what libdispatch needed for its next worker thread, and
// the host's queue never drained again. The writer needs far less stack than the default.
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "CTraceRuntime.h"

uint64_t ctrace_address_space_limit(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return (uint64_t)limit.rlim_cur;
}

uint64_t ctrace_address_space_used(void) {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[64];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = 0;
  // The first field: the total program size, in pages.
  return (uint64_t)strtoull(text, NULL, 10) * (uint64_t)sysconf(_SC_PAGESIZE);
}

int ctrace_start_thread(void *(*body)(void *), void *context, size_t stack_size) {
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) != 0) return EAGAIN;
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  if (stack_size > 0) pthread_attr_setstacksize(&attributes, stack_size);
  pthread_t thread;
  int status = pthread_create(&thread, &attributes, body, context);
  pthread_attr_destroy(&attributes);
  return status;
}
