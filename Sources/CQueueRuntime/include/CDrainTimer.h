#ifndef CDRAINTIMER_H
#define CDRAINTIMER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The C half of the queues' drain timer (`DrainTimer`): a one-shot timer on the monotonic
/// clock, the thread that waits on it, the lock that guards the timer's deadlines, and what
/// `fork()` does to them.
///
/// Why in C: the thread must be safe to fork beside. It starts and waits in C, holding no
/// lock of the Swift runtime, and calls into Swift only when a deadline comes; the lock is
/// a pthread mutex that the fork handlers take and give back, so that a child never inherits
/// it held; a child gets a timer and a thread of its own on first use (the parent's thread
/// is not copied, and the parent's timer must not be re-armed from the child).

/// Takes and gives back the timer's lock, which guards the Swift side's deadlines too.
void cdraintimer_lock(void);
void cdraintimer_unlock(void);

/// With the lock held: this process's timer, made with its thread on first use (and in a
/// child of `fork()`, whose copy of the parent's timer is closed), or -1 when none can be
/// had. The thread calls `fire(timer)` each time the timer expires, without the lock, and
/// `stranded()` once if the timer can no longer be read, then ends. `*fresh` is set to 1 when
/// this call made the timer (nothing is armed on it yet).
int cdraintimer_timer(void (*fire)(int timer), void (*stranded)(void), int *fresh);

/// Arms `timer` to expire at `deadline_ns` on the monotonic clock, replacing any earlier
/// setting; a deadline already past expires at once. 0, or -1.
int cdraintimer_arm(int timer, uint64_t deadline_ns);

/// Now on the monotonic clock, in nanoseconds: the clock of the deadlines.
uint64_t cdraintimer_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif
