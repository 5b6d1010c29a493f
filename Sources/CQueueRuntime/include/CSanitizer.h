#ifndef CSANITIZER_H
#define CSANITIZER_H

/// Tells ThreadSanitizer that the calling thread acquired the lock at `address`.
/// The corresponding C function is `__tsan_acquire`; without ThreadSanitizer it does nothing.
void csanitizer_acquire(void *address);

/// Tells ThreadSanitizer that the calling thread releases the lock at `address`.
/// The corresponding C function is `__tsan_release`; without ThreadSanitizer it does nothing.
void csanitizer_release(void *address);

#endif
