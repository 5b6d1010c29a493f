// The census test child's one piece of C: a thread blocked in a system call whose only
// reference to an object is in a register (see the header).
#include "CensusProbeSupport.h"

#include <string.h>
#include <unistd.h>

__attribute__((noinline)) void census_probe_scrub_stack(void) {
  volatile unsigned char dead[16384];
  memset((void *)dead, 0, sizeof dead);
  __asm__ volatile("" : : "r"(dead) : "memory");
}

long census_probe_read_holding_in_register(uintptr_t hidden, uintptr_t key, int fd) {
#if defined(__x86_64__)
  long result;
  unsigned char byte;
  // The address is made in r12 from its two hidden halves, so no C variable (which an
  // unoptimized build keeps on the stack) ever holds it; r12 is cleared once read returns.
  __asm__ volatile(
      "mov %[hidden], %%r12\n\t"
      "xor %[key], %%r12\n\t"
      "xor %%eax, %%eax\n\t"  // SYS_read
      "mov %[fd], %%edi\n\t"
      "mov %[buffer], %%rsi\n\t"
      "mov $1, %%edx\n\t"
      "syscall\n\t"
      "xor %%r12, %%r12\n\t"
      : "=&a"(result)
      : [hidden] "r"(hidden), [key] "r"(key), [fd] "r"(fd), [buffer] "r"(&byte)
      : "rdi", "rsi", "rdx", "rcx", "r11", "r12", "memory");
  return result;
#else
  (void)hidden;
  (void)key;
  unsigned char byte;
  return read(fd, &byte, 1);
#endif
}
