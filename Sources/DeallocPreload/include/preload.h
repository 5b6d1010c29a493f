#ifndef DEALLOCPRELOAD_H
#define DEALLOCPRELOAD_H

// The preloadable recorder's parts (see preload.c): the decision whether to record in this
// process, and the text buffer its log is written from.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Whether this process records (1 after the preload started its registry), for tests.
int dealloctrace_preload_recording(void);

/// What `preload_decide` found about this process.
typedef struct {
  /// 1: record here.
  int record;
  /// 1: the program links CHolders itself (DeallocTrace): its own recorder records.
  int host_links_recorder;
  /// 1: the program links DeallocQueue but not the recorder, whose queues the census
  /// cannot ask.
  int uses_queue;
  /// The executable's file name, its control and non-ASCII bytes as `?` (for messages).
  char name[256];
  /// One line (ending in a line break) saying why this process is not recorded, when the
  /// user should hear it; empty for the silent skips (the toolchain, --only).
  char refusal[512];
} preload_decision;

/// Decides for this process, from its executable, its loaded objects and DEALLOCTRACE_ONLY.
preload_decision preload_decide(void);

/// Whether `name` is one of the Swift toolchain's own programs, never recorded.
int preload_is_toolchain(const char *name);

/// A growing malloc'ed text; `failed` once memory ran out (the text is then not written).
typedef struct {
  char *bytes;
  size_t length;
  size_t capacity;
  int failed;
} preload_text;

void preload_append_bytes(preload_text *text, const char *bytes, size_t length);
void preload_append(preload_text *text, const char *string);
void preload_append_int(preload_text *text, int64_t value);
/// Appends `bytes` as a JSON string, escaped as docs/log-format.md requires.
void preload_append_json_string(preload_text *text, const char *bytes, size_t length);

#ifdef __cplusplus
}
#endif

#endif
