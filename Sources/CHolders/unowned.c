// Unowned retains and releases for the retain/release history (history.c). libswiftCore lets
// a tool hook its strong retains and releases (hooks.c), not its unowned ones, so CHolders
// defines the unowned entries itself, weak, and each forwards to the runtime's definition,
// the next one in the lookup order (dlsym RTLD_NEXT), noting the event for an object of a
// type under history.
//
// Where these definitions are reached:
// - A program that links CHolders (through DeallocTrace or DeallocTesting): its own code's
//   calls bind to them when it is linked. The linker also exports them from the executable
//   (libswiftCore.so, in the link, defines the same names), so the shared libraries it loads
//   (Foundation, XCTest) reach them through the dynamic linker too. libswiftCore's calls
//   inside itself do not leave it.
// - The preload library (DeallocTracePreload): loaded before the program's libraries, its
//   definitions are found first by every call made through the dynamic linker. Its log has
//   no `holders` records and so no history: there they only forward.
// - A program linked with -static-stdlib: the runtime's strong definitions win over these
//   weak ones at link time (weak, so that such a program still links), and nothing unowned is
//   recorded; the strong retains and releases still are, through the hooks.
//
// An unowned event is added to a history, never starts one (history.c): noted while another
// thread makes the object's last strong release, it can land after that release dropped the
// history, and would otherwise leave one behind for a dead object, which a later object at
// the same address could be shown. The cost: an object allocated before its type came under
// history records its unowned events only from its first strong one on.
//
// What an event is: swift_unownedRetain(_n) and swift_unownedRelease(_n) are `unowned-retain`
// and `unowned-release` events, whose count is the strong count, which they leave as it was.
// swift_unownedRetainStrong loads an unowned reference strong: it takes a strong reference
// without passing swift_retain, which swift_release later gives back, so it is recorded as a
// strong retain, and the pairing stays balanced (swift_unownedRetainStrongAndRelease is that
// retain and an unowned release). As for strong ones, an object that is deiniting, or
// immortal, records nothing.
//
// Who pays: every unowned retain and release of the process pays a forward through a
// pointer and one load of the history's type count (0 while no type is under history);
// only an object of a type under history unwinds and takes the history's lock.
#define _GNU_SOURCE

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history.h"
#include "internal.h"

typedef uintptr_t (*retain_fn)(uintptr_t object);
typedef void (*release_fn)(uintptr_t object);
typedef uintptr_t (*retain_n_fn)(uintptr_t object, int n);
typedef void (*release_n_fn)(uintptr_t object, int n);

enum {
  UNOWNED_RETAIN,
  UNOWNED_RELEASE,
  UNOWNED_RETAIN_N,
  UNOWNED_RELEASE_N,
  RETAIN_STRONG,
  RETAIN_STRONG_AND_RELEASE,
  ENTRIES
};

static const char *const entry_names[ENTRIES] = {
    "swift_unownedRetain",
    "swift_unownedRelease",
    "swift_unownedRetain_n",
    "swift_unownedRelease_n",
    "swift_unownedRetainStrong",
    "swift_unownedRetainStrongAndRelease",
};

/// The runtime's definitions, found once (NULL until then).
static void *runtime_entries[ENTRIES];

/// A definition the program calls in place of the runtime's.
#define ENTRY __attribute__((weak, noinline, visibility("default")))
/// Where the entry returns to: the program's frame, where an event's stack begins.
#define RETURN_ADDRESS ((uintptr_t)__builtin_return_address(0))

/// Looks up the runtime's definition of `which` and keeps it; NULL when there is none (a
/// program linked with -static-stdlib, whose calls never come here). Two threads finding it
/// at once store the same pointer.
static void *find(int which) {
  void *entry = dlsym(RTLD_NEXT, entry_names[which]);
  if (entry != NULL) __atomic_store_n(&runtime_entries[which], entry, __ATOMIC_RELEASE);
  return entry;
}

/// Finds the runtime's definition of `which` at a call. Without one the call cannot be
/// carried out: said on stderr, then abort.
__attribute__((noinline, cold)) static void *resolve(int which) {
  void *entry = find(which);
  if (entry == NULL) {
    static const char text[] = "dealloctrace: the Swift runtime's unowned entry is missing: ";
    ssize_t ignored = write(2, text, sizeof text - 1);
    ignored = write(2, entry_names[which], strlen(entry_names[which]));
    ignored = write(2, "\n", 1);
    (void)ignored;
    abort();
  }
  return entry;
}

/// The runtime's definition of `which`. Found at the first call if the constructor below has
/// not run yet: another library's initializer can make one before it.
static inline void *runtime_entry(int which) {
  void *entry = __atomic_load_n(&runtime_entries[which], __ATOMIC_ACQUIRE);
  return __builtin_expect(entry != NULL, 1) ? entry : resolve(which);
}

/// Finds them all while the program loads, so that no later first call waits for the
/// dynamic linker's lock; one it does not find is left to the first call (never made in a
/// program whose runtime is linked in).
__attribute__((constructor)) static void find_unowned_entries(void) {
  for (int which = 0; which < ENTRIES; which++) (void)find(which);
}

/// Records `n` events `op` of the object at `object` when its type is under history, with
/// the stack from `caller` out. Nothing while the tool itself runs on this thread: its work
/// (a scan with other threads parked, a name lookup) must not take the history's lock.
static inline __attribute__((always_inline)) void note(uintptr_t object, int op, int n,
                                                       uintptr_t caller) {
  if ((intptr_t)object <= 0 || __builtin_expect(!ch_history_wants(object), 1)) return;
  if (ch_in_tool) return;
  int64_t count = ch_history_count(object);
  for (int i = 0; count > 0 && i < n; i++) ch_history_record(object, op, count, caller);
}

ENTRY uintptr_t swift_unownedRetain(uintptr_t object) {
  uintptr_t result = ((retain_fn)runtime_entry(UNOWNED_RETAIN))(object);
  note(object, CH_HISTORY_UNOWNED_RETAIN, 1, RETURN_ADDRESS);
  return result;
}

ENTRY uintptr_t swift_unownedRetain_n(uintptr_t object, int n) {
  uintptr_t result = ((retain_n_fn)runtime_entry(UNOWNED_RETAIN_N))(object, n);
  note(object, CH_HISTORY_UNOWNED_RETAIN, n, RETURN_ADDRESS);
  return result;
}

// The releases are noted first: the last unowned release of a deinited object frees its
// memory (such an object records nothing, but its header must be read before).

ENTRY void swift_unownedRelease(uintptr_t object) {
  note(object, CH_HISTORY_UNOWNED_RELEASE, 1, RETURN_ADDRESS);
  ((release_fn)runtime_entry(UNOWNED_RELEASE))(object);
}

ENTRY void swift_unownedRelease_n(uintptr_t object, int n) {
  note(object, CH_HISTORY_UNOWNED_RELEASE, n, RETURN_ADDRESS);
  ((release_n_fn)runtime_entry(UNOWNED_RELEASE_N))(object, n);
}

ENTRY uintptr_t swift_unownedRetainStrong(uintptr_t object) {
  uintptr_t result = ((retain_fn)runtime_entry(RETAIN_STRONG))(object);
  note(object, CH_HISTORY_RETAIN, 1, RETURN_ADDRESS);
  return result;
}

ENTRY void swift_unownedRetainStrongAndRelease(uintptr_t object) {
  ((release_fn)runtime_entry(RETAIN_STRONG_AND_RELEASE))(object);
  // The strong reference it took keeps the object alive for both notes.
  note(object, CH_HISTORY_RETAIN, 1, RETURN_ADDRESS);
  note(object, CH_HISTORY_UNOWNED_RELEASE, 1, RETURN_ADDRESS);
}
