#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "CTraceRuntime.h"

int ctrace_try_lock(int fd) {
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 1;
  return errno == EWOULDBLOCK ? 0 : -1;
}

int ctrace_open_log(const char *path, int exclusive) {
  // O_NONBLOCK only for the open itself: a FIFO nobody reads fails at once (ENXIO) instead
  // of blocking the host in `open`. Writes then block as usual (back-pressure, not EAGAIN).
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  if (exclusive) flags |= O_EXCL;
  int fd = open(path, flags, 0600);
  if (fd < 0) return fd;
  int status = fcntl(fd, F_GETFL);
  if (status == -1 || fcntl(fd, F_SETFL, status & ~O_NONBLOCK) == -1) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int ctrace_is_regular_file(int fd) {
  struct stat status;
  if (fstat(fd, &status) != 0) return -1;
  return S_ISREG(status.st_mode) ? 1 : 0;
}

int ctrace_errno(void) { return errno; }

int ctrace_write_all(int fd, const void *bytes, size_t length) {
  const char *cursor = bytes;
  while (length > 0) {
    ssize_t n = write(fd, cursor, length);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) {
      errno = EIO;
      return -1;
    }
    cursor += n;
    length -= (size_t)n;
  }
  return 0;
}

static void write_signals(sigset_t *set) {
  sigemptyset(set);
  sigaddset(set, SIGPIPE);
  sigaddset(set, SIGXFSZ);
}

void ctrace_block_write_signals(void) {
  sigset_t set;
  write_signals(&set);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int ctrace_write_log(int fd, const void *bytes, size_t length) {
  sigset_t quiet, previous, pending_before;
  write_signals(&quiet);
  pthread_sigmask(SIG_BLOCK, &quiet, &previous);
  sigemptyset(&pending_before);
  sigpending(&pending_before);
  int status = ctrace_write_all(fd, bytes, length);
  int saved = errno;
  if (status != 0 && (saved == EPIPE || saved == EFBIG)) {
    int raised = saved == EPIPE ? SIGPIPE : SIGXFSZ;
    // Ours only when it was not pending before the write; the host's own stays pending.
    if (!sigismember(&pending_before, raised)) {
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, raised);
      struct timespec now = {0, 0};
      while (sigtimedwait(&one, NULL, &now) < 0 && errno == EINTR) {
      }
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, NULL);
  errno = saved;
  return status;
}
