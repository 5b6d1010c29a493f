#define _GNU_SOURCE

#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "CTraceRuntime.h"
#include "ThreadState.h"

__thread int64_t ctrace_cached_thread_id = 0;
static __thread ctrace_pending_enqueue thread_pending;
static __thread uint64_t thread_announced = 0;
static __thread int writer_thread = 0;

int64_t ctrace_thread_id(void) {
  int64_t tid = ctrace_cached_thread_id;
  if (tid == 0) {
    tid = (int64_t)syscall(SYS_gettid);
    ctrace_cached_thread_id = tid;
  }
  return tid;
}

void ctrace_thread_name(char *buffer, size_t capacity) {
  if (capacity == 0) return;
  buffer[0] = 0;
  if (pthread_getname_np(pthread_self(), buffer, capacity) != 0) buffer[0] = 0;
}

void ctrace_set_thread_name(const char *name) { pthread_setname_np(pthread_self(), name); }

ctrace_pending_enqueue *ctrace_thread_pending(void) { return &thread_pending; }

uint64_t ctrace_thread_announced(void) { return thread_announced; }
void ctrace_set_thread_announced(uint64_t generation) { thread_announced = generation; }

int ctrace_is_writer_thread(void) { return writer_thread; }
void ctrace_set_writer_thread(int flag) { writer_thread = flag; }

// How much dead stack a scrub clears, and how far from the stack's limit it stays.
#define SCRUB_BYTES (64 * 1024)
#define SCRUB_MARGIN (32 * 1024)
static __thread uintptr_t thread_stack_low = 0;

__attribute__((noinline)) static void scrub_region(size_t bytes) {
  char region[bytes];
  explicit_bzero(region, bytes);
  __asm__ volatile("" : : "r"(region) : "memory");
}

__attribute__((noinline)) void ctrace_scrub_dead_stack(void) {
  if (thread_stack_low == 0) {
    pthread_attr_t attributes;
    void *low = NULL;
    size_t size = 0;
    thread_stack_low = 1;  // unknown: never scrub
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
      if (pthread_attr_getstack(&attributes, &low, &size) == 0 && low != NULL) {
        thread_stack_low = (uintptr_t)low;
      }
      pthread_attr_destroy(&attributes);
    }
  }
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  if (thread_stack_low <= 1 || here < thread_stack_low + SCRUB_MARGIN + 4096) return;
  size_t room = here - thread_stack_low - SCRUB_MARGIN;
  scrub_region(room < SCRUB_BYTES ? room : SCRUB_BYTES);
}
