// Stopping the other threads of the process while the census reads memory, Boehm-style:
// each thread gets a signal whose handler waits (bounded) until the census lets it go.
//
// Why: a thread blocked in a system call (read(2), a futex) keeps the callee-saved
// registers of its caller in the kernel's saved state, not on its stack, so an object held
// only in such a register looks unreferenced. Delivering a signal makes the kernel push the
// whole user register state onto the thread's own stack (the signal frame), and the waiting
// handler keeps it there, above the stack pointer that /proc/self/task/<tid>/syscall then
// shows, which is where the scan starts reading. A thread that is running is stopped too,
// so no reference moves between memory already read and memory not read yet.
//
// The trade-offs, said plainly:
// - the wait is bounded (CH_PARK_MAX_NS): a census that takes longer, or blocks on a lock a
//   parked thread holds (malloc's, the runtime's name cache), lets every thread go on by
//   itself, never a hang;
// - SA_RESTART restarts the system calls the kernel restarts (read, write, wait, futex
//   waits); the ones it never restarts (nanosleep, poll, epoll_wait, select) return EINTR
//   to a host that does not expect it;
// - a thread that blocks the signal (DrainTimer's, which blocks every signal) is not
//   parked: it is counted as unstopped and its stack is read as it is;
// - the signal is SIGPWR; when the host installed its own handler for it, no thread is
//   parked (counted unstopped) rather than taking the host's signal over.
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "census.h"

#define PARK_SIGNAL SIGPWR
#define CH_PARK_MAX_NS 2000000000ull  // how long a parked thread waits at most
#define CH_PARK_ANSWER_NS 200000000ull  // how long the census waits for threads to park

static int release_word;  // bumped to let parked threads go
static int parked_count;  // threads inside the handler now
static int census_active;  // 1 while a census wants threads parked

static uint64_t monotonic_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/// Waits until the census bumps `release_word` or CH_PARK_MAX_NS passed. The interrupted
/// registers sit in the signal frame above this function's frame; __builtin_unwind_init
/// spills the handler's own callee-saved registers too.
static void park_handler(int signal, siginfo_t *info, void *context) {
  (void)signal;
  (void)info;
  (void)context;
  // A signal that arrives after its census let threads go (delivery was late) is ignored.
  if (!__atomic_load_n(&census_active, __ATOMIC_ACQUIRE)) return;
  int saved_errno = errno;
  __builtin_unwind_init();
  int generation = __atomic_load_n(&release_word, __ATOMIC_ACQUIRE);
  __atomic_add_fetch(&parked_count, 1, __ATOMIC_ACQ_REL);
  uint64_t deadline = monotonic_ns() + CH_PARK_MAX_NS;
  while (__atomic_load_n(&release_word, __ATOMIC_ACQUIRE) == generation) {
    uint64_t now = monotonic_ns();
    if (now >= deadline) break;
    struct timespec wait = {0, 10000000};  // 10 ms slices
    syscall(SYS_futex, &release_word, FUTEX_WAIT_PRIVATE, generation, &wait, NULL, 0);
  }
  __atomic_sub_fetch(&parked_count, 1, __ATOMIC_ACQ_REL);
  errno = saved_errno;
}

/// Whether thread `tid` blocks PARK_SIGNAL (its SigBlk mask in /proc/self/task/<tid>/status).
static int blocks_signal(long tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  char text[4096];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 1;
  text[n] = 0;
  const char *line = strstr(text, "SigBlk:");
  if (line == NULL) return 1;
  unsigned long long mask = strtoull(line + 7, NULL, 16);
  return (mask >> (PARK_SIGNAL - 1)) & 1;
}

struct linux_dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

/// Whether the host installed its own handler for the park's signal (then the census
/// leaves its threads alone).
static int host_handles_signal(void) {
  struct sigaction current;
  if (sigaction(PARK_SIGNAL, NULL, &current) != 0) return 1;
  if (current.sa_flags & SA_SIGINFO) return current.sa_sigaction != NULL;
  return current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
}

/// The process's other threads, into `tids` (at most CH_PARK_MAX_THREADS; the rest are
/// counted unstopped). Listed with getdents64, not opendir: no malloc while threads are
/// being stopped. -1 when the list cannot be read.
static long list_other_threads(long *tids, ch_park *park) {
  int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  long self = syscall(SYS_gettid);
  long tid_count = 0;
  char buffer[8192];
  for (;;) {
    long n = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      struct linux_dirent64 *entry = (struct linux_dirent64 *)(buffer + at);
      at += entry->d_reclen;
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      long tid = strtol(entry->d_name, NULL, 10);
      if (tid == self) continue;
      if (tid_count < CH_PARK_MAX_THREADS) {
        tids[tid_count++] = tid;
      } else {
        park->unstopped++;
      }
    }
  }
  close(dir);
  return tid_count;
}

/// Signals each thread that does not block the signal, then waits (bounded by
/// CH_PARK_ANSWER_NS) until those have parked.
static void signal_and_wait(ch_park *park, const long *tids, size_t tid_count) {
  pid_t pid = getpid();
  size_t sent = 0;
  for (size_t i = 0; i < tid_count; i++) {
    if (blocks_signal(tids[i]) || syscall(SYS_tgkill, pid, tids[i], PARK_SIGNAL) != 0) {
      park->unstopped++;
      continue;
    }
    sent++;
  }
  uint64_t deadline = monotonic_ns() + CH_PARK_ANSWER_NS;
  while ((size_t)__atomic_load_n(&parked_count, __ATOMIC_ACQUIRE) < sent &&
         monotonic_ns() < deadline) {
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
  size_t parked = (size_t)__atomic_load_n(&parked_count, __ATOMIC_ACQUIRE);
  park->stopped = parked < sent ? parked : sent;
  park->unstopped += sent - park->stopped;
  park->sent = sent;
}

int ch_park_threads(ch_park *park) {
  memset(park, 0, sizeof *park);
  const char *off = getenv("CHOLDERS_CENSUS_NO_STOP");
  if (off && strcmp(off, "1") == 0) return 0;
  int host_handler = host_handles_signal();
  long tids[CH_PARK_MAX_THREADS];
  long tid_count = list_other_threads(tids, park);
  if (tid_count < 0) return 0;
  if (host_handler) {
    park->unstopped += (size_t)tid_count;
    return 0;
  }
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = park_handler;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&action.sa_mask);
  if (sigaction(PARK_SIGNAL, &action, &park->previous) != 0) {
    park->unstopped += (size_t)tid_count;
    return 0;
  }
  park->installed = 1;
  __atomic_store_n(&census_active, 1, __ATOMIC_RELEASE);
  signal_and_wait(park, tids, (size_t)tid_count);
  return (int)park->stopped;
}

void ch_unpark_threads(ch_park *park) {
  if (!park->installed) return;
  __atomic_store_n(&census_active, 0, __ATOMIC_RELEASE);
  __atomic_add_fetch(&release_word, 1, __ATOMIC_ACQ_REL);
  syscall(SYS_futex, &release_word, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
  // Every handler must be out before the previous disposition comes back: a signal still
  // pending at a thread that the default action would then kill the process with.
  uint64_t deadline = monotonic_ns() + CH_PARK_MAX_NS;
  while (__atomic_load_n(&parked_count, __ATOMIC_ACQUIRE) > 0 && monotonic_ns() < deadline) {
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
  // A signal sent to a thread that had not run its handler yet is still pending: the
  // handler stays installed (it returns at once once released) rather than letting the
  // default action of SIGPWR, which terminates, meet it.
  if (park->stopped == park->sent) sigaction(PARK_SIGNAL, &park->previous, NULL);
  park->installed = 0;
}
