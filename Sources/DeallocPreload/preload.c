// The preloadable recorder (`dealloctrace run`, issue 35): loaded with LD_PRELOAD into any
// Swift program, it starts the live-object registry before `main` and, at exit, runs the
// whole-process census and writes it as a log of its own (`session`, `census`, `end`) into
// the directory DEALLOCTRACE_LOG names, or prints its `leaks`-style text on stderr.
//
// What it is made of, and why: CHolders (the registry, its hooks and the census) and CElf,
// both C, plus libc and libdl. It links no Swift module and not the Swift runtime, so a host
// that links DeallocQueue or Foundation in another version meets no second copy of their
// state; the Swift runtime it hooks is the host's own, found with dlsym.
//
// It records only when DEALLOCTRACE_PRELOAD (`leaks` or `holders`, set by `run`) asks, and
// then only in a process that passes `preload_policy.c`'s checks: not a toolchain process,
// matching DEALLOCTRACE_ONLY, a Swift program, and not one that links CHolders itself. Such
// a host (one linking DeallocTrace) records through its own recorder: this library sets
// DEALLOCTRACE_LEAKS (and DEALLOCTRACE_HOLDERS) before the host's constructors read them,
// and stays out, so the process has one session.
//
// The trade-off of writing the log at exit only: a process killed before its exit leaves no
// log, but it could not have run its census either.
#define _GNU_SOURCE

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "CHolders.h"
#include "CHoldersCensus.h"
#include "CHoldersExtras.h"
#include "preload.h"

static struct timespec started_monotonic;
static char started_wall[40];
static int recording;
static int holders_mode;
static int queues_unknown;
static int hand_to_linked_recorder;

static int truthy(const char *value) {
  return value != NULL && value[0] != 0 && strcmp(value, "0") != 0;
}

static void say(const char *line) {
  size_t left = strlen(line);
  while (left > 0) {
    ssize_t n = write(2, line, left);
    if (n <= 0) return;
    line += n;
    left -= (size_t)n;
  }
}

static int64_t nanoseconds_since_start(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)(now.tv_sec - started_monotonic.tv_sec) * 1000000000 +
         (now.tv_nsec - started_monotonic.tv_nsec);
}

/// The log's path: DEALLOCTRACE_LOG as a directory (made when missing, mode 0700), with
/// `dealloctrace.<pid>.jsonl` in it. 0 when there is no room or no directory is named.
static int log_path(char *path, size_t size) {
  const char *directory = getenv("DEALLOCTRACE_LOG");
  if (directory == NULL || directory[0] == 0) return 0;
  mkdir(directory, 0700);
  size_t length = strlen(directory);
  const char *separator = length > 0 && directory[length - 1] == '/' ? "" : "/";
  int n = snprintf(path, size, "%s%sdealloctrace.%d.jsonl", directory, separator, (int)getpid());
  return n > 0 && (size_t)n < size;
}

static void write_log(const char *census_members) {
  char path[4096];
  if (!log_path(path, sizeof path)) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    char line[4200];
    snprintf(line, sizeof line, "dealloctrace: cannot create the log %s\n", path);
    say(line);
    return;
  }
  char exe[4096];
  ssize_t exe_length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (exe_length < 0) exe_length = 0;
  exe[exe_length] = 0;
  preload_text text = {0};
  preload_append(&text, "{\"ev\":\"session\",\"v\":1,\"t\":0,\"pid\":");
  preload_append_int(&text, getpid());
  preload_append(&text, ",\"exe\":");
  preload_append_json_string(&text, exe, (size_t)exe_length);
  preload_append(&text, ",\"wall\":\"");
  preload_append(&text, started_wall);
  preload_append(&text, "\",\"delay_ms\":100,\"frames\":0,\"recorder\":\"preload\"");
  if (queues_unknown) preload_append(&text, ",\"queues_unknown\":true");
  preload_append(&text, "}\n");
  // The census's members, as the recorder's writer takes them: JSON members without braces.
  if (census_members != NULL) {
    const char *members = census_members;
    size_t length = strlen(members);
    if (length >= 2 && members[0] == '{' && members[length - 1] == '}') members++, length -= 2;
    preload_append(&text, "{\"ev\":\"census\",\"t\":");
    preload_append_int(&text, nanoseconds_since_start());
    preload_append(&text, ",\"tid\":");
    preload_append_int(&text, cholders_thread_id());
    if (length > 0) preload_append(&text, ",");
    preload_append_bytes(&text, members, length);
    preload_append(&text, "}\n");
  }
  preload_append(&text, "{\"ev\":\"end\",\"t\":");
  preload_append_int(&text, nanoseconds_since_start());
  preload_append(&text, ",\"why\":\"exit\",\"pending\":0,\"lost\":0}\n");
  if (!text.failed) {
    const char *bytes = text.bytes;
    size_t left = text.length;
    while (left > 0) {
      ssize_t n = write(fd, bytes, left);
      if (n <= 0) break;
      bytes += n;
      left -= (size_t)n;
    }
  }
  free(text.bytes);
  close(fd);
}

/// Says why this process is not recorded: on stderr, and as `refused.<pid>.txt` in the log
/// directory, for `run --strict`.
static void refuse(const char *line) {
  say(line);
  const char *directory = getenv("DEALLOCTRACE_LOG");
  if (directory == NULL || directory[0] == 0) return;
  char path[4096];
  int n = snprintf(path, sizeof path, "%s/refused.%d.txt", directory, (int)getpid());
  if (n <= 0 || (size_t)n >= sizeof path) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ssize_t ignored = write(fd, line, strlen(line));
  (void)ignored;
  close(fd);
}

static void census_at_exit(void) {
  if (!recording) return;
  recording = 0;
  char *text = NULL;
  char *json = cholders_census_json(NULL, "exit", &text);
  if (getenv("DEALLOCTRACE_LOG") != NULL && getenv("DEALLOCTRACE_LOG")[0] != 0) {
    write_log(json);
  } else if (text != NULL) {
    say(text);
  }
  if (queues_unknown) {
    say("dealloctrace: this program uses DeallocQueue without DeallocTrace: objects waiting in "
        "a queue at exit may show as leaks\n");
  }
  cholders_free(text);
  cholders_free(json);
}

static void note_start_time(void) {
  clock_gettime(CLOCK_MONOTONIC, &started_monotonic);
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  struct tm utc;
  gmtime_r(&wall.tv_sec, &utc);
  char seconds[24];
  strftime(seconds, sizeof seconds, "%Y-%m-%dT%H:%M:%S", &utc);
  snprintf(started_wall, sizeof started_wall, "%s.%06ldZ", seconds, wall.tv_nsec / 1000);
}

int dealloctrace_preload_recording(void) { return recording; }

// Priority 101: before CHolders' own constructors in this library, which read
// DEALLOCTRACE_LEAKS and DEALLOCTRACE_HOLDERS; `run` sets neither, so they stay out unless
// this constructor hands a process to a linked recorder.
__attribute__((constructor(101))) static void preload_load(void) {
  const char *mode = getenv("DEALLOCTRACE_PRELOAD");
  if (mode == NULL || mode[0] == 0) return;
  holders_mode = strcmp(mode, "holders") == 0;
  preload_decision decision = preload_decide();
  if (decision.host_links_recorder) {
    hand_to_linked_recorder = 1;
    return;
  }
  // Set by an ancestor that links the recorder: not for this process's CHolders copy.
  if (truthy(getenv("DEALLOCTRACE_LEAKS"))) unsetenv("DEALLOCTRACE_LEAKS");
  if (truthy(getenv("DEALLOCTRACE_HOLDERS"))) unsetenv("DEALLOCTRACE_HOLDERS");
  if (decision.refusal[0] != 0) {
    refuse(decision.refusal);
    return;
  }
  if (!decision.record) return;
  queues_unknown = decision.uses_queue;
  note_start_time();
  if (cholders_enable() != CHOLDERS_ON) {
    char line[700];
    snprintf(line, sizeof line, "dealloctrace: not recording in %s: %s\n", decision.name,
             cholders_problem());
    refuse(line);
    return;
  }
  recording = 1;
  atexit(census_at_exit);
}

// Default priority, and linked after CHolders (SwiftPM links a target's dependencies first):
// runs after CHolders' constructors in this library, which must not see the variables, and
// before the executable's, whose linked recorder reads them. The one-session test of
// `run` fails if this order ever changes.
__attribute__((constructor)) static void preload_hand_over(void) {
  if (!hand_to_linked_recorder) return;
  setenv("DEALLOCTRACE_LEAKS", "1", 1);
  if (holders_mode) setenv("DEALLOCTRACE_HOLDERS", "1", 1);
}
