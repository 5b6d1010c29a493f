#define _GNU_SOURCE
#include "CDrainTimer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/timerfd.h>
#endif

static pthread_mutex_t timer_lock = PTHREAD_MUTEX_INITIALIZER;
/// This process's timer, -1 before it is made; `made` says whether an attempt was made.
static int timer_fd = -1;
static int timer_made = 0;

void cdraintimer_lock(void) { pthread_mutex_lock(&timer_lock); }
void cdraintimer_unlock(void) { pthread_mutex_unlock(&timer_lock); }

static void before_fork(void) { pthread_mutex_lock(&timer_lock); }
static void after_fork_in_parent(void) { pthread_mutex_unlock(&timer_lock); }
static void after_fork_in_child(void) {
  // The thread that waits on the timer is the parent's alone; the descriptor is shared with
  // the parent, whose deadlines it holds: the child makes its own on first use.
  if (timer_fd >= 0) close(timer_fd);
  timer_fd = -1;
  timer_made = 0;
  pthread_mutex_unlock(&timer_lock);
}
/// Registered at load, before the program's threads exist, not at the timer's first use:
/// that use takes the lock first, and glibc skips the parent and child handlers of one
/// registered while another thread's fork runs its prepare handlers, so a child forked then
/// would inherit the lock taken and hang at its first schedule.
__attribute__((constructor)) static void install_fork_handlers(void) {
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

struct waiter {
  int timer;
  void (*fire)(int timer);
  void (*stranded)(void);
};

static void *wait_for_deadlines(void *context) {
  struct waiter waiter = *(struct waiter *)context;
  free(context);
  uint64_t expirations;
  for (;;) {
    ssize_t n = read(waiter.timer, &expirations, sizeof expirations);
    if (n == (ssize_t)sizeof expirations) {
      waiter.fire(waiter.timer);
    } else if (!(n < 0 && errno == EINTR)) {
      break;
    }
  }
  waiter.stranded();
  return NULL;
}

/// Starts `body` on a detached thread with every signal blocked on it (a signal that the
/// host directs at the process must never land on a thread of the queue's); 0 or an error.
static int start_thread(void *(*body)(void *), void *context) {
  sigset_t all, previous;
  sigfillset(&all);
  // The new thread inherits the mask in force when it is created.
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_t thread;
  int status = pthread_create(&thread, NULL, body, context);
  pthread_sigmask(SIG_SETMASK, &previous, NULL);
  if (status != 0) return status;
#ifdef __linux__
  pthread_setname_np(thread, "dealloc.timer");
#endif
  pthread_detach(thread);
  return 0;
}

int cdraintimer_timer(void (*fire)(int timer), void (*stranded)(void), int *fresh) {
  *fresh = 0;
  if (timer_made) return timer_fd;
  timer_made = 1;
#ifdef __linux__
  int timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  if (timer < 0) return -1;
  struct waiter *waiter = malloc(sizeof *waiter);
  if (waiter == NULL) {
    close(timer);
    return -1;
  }
  waiter->timer = timer;
  waiter->fire = fire;
  waiter->stranded = stranded;
  if (start_thread(wait_for_deadlines, waiter) != 0) {
    free(waiter);
    close(timer);
    return -1;
  }
  timer_fd = timer;
  *fresh = 1;
  return timer;
#else
  (void)fire;
  (void)stranded;
  return -1;
#endif
}

int cdraintimer_arm(int timer, uint64_t deadline_ns) {
#ifdef __linux__
  // A zero it_value would disarm the timer instead: the earliest deadline is 1 ns.
  if (deadline_ns == 0) deadline_ns = 1;
  struct itimerspec setting = {0};
  setting.it_value.tv_sec = (time_t)(deadline_ns / 1000000000u);
  setting.it_value.tv_nsec = (long)(deadline_ns % 1000000000u);
  return timerfd_settime(timer, TFD_TIMER_ABSTIME, &setting, NULL) == 0 ? 0 : -1;
#else
  (void)timer;
  (void)deadline_ns;
  return -1;
#endif
}

uint64_t cdraintimer_now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}
