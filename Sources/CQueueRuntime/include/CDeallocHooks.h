#ifndef CDEALLOCHOOKS_H
#define CDEALLOCHOOKS_H

#ifdef __cplusplus
extern "C" {
#endif

/// The tracing switch, read on every enqueue: a plain C global, so the check inlines into
/// the queue as one relaxed load (a Swift global would add a `swift_once` call).
extern int cdeallochooks_recording_flag;
static inline int cdeallochooks_is_recording(void) {
  return __atomic_load_n(&cdeallochooks_recording_flag, __ATOMIC_RELAXED);
}
void cdeallochooks_set_recording(int on);

/// The recorder's hooks (an unmanaged Swift object, kept forever), or NULL before the
/// recorder installed them.
extern void *cdeallochooks_hooks_pointer;
static inline void *cdeallochooks_hooks(void) {
  return __atomic_load_n(&cdeallochooks_hooks_pointer, __ATOMIC_ACQUIRE);
}

/// Publishes `hooks` unless some were published before: 1 when these were, 0 otherwise.
int cdeallochooks_install(void *hooks);

/// Lets the recorder start itself from the environment, when it is linked into the process.
/// The corresponding function is `dealloctrace_start_from_environment`, a weak reference:
/// a process that links the queue without the recorder has none, and this does nothing.
void cdeallochooks_start_recorder_from_environment(void);

#ifdef __cplusplus
}
#endif

#endif
