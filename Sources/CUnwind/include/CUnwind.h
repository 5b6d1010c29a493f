#ifndef CUNWIND_H
#define CUNWIND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Loads libunwind (once) with `dlopen(RTLD_LOCAL)`, so that its exports (a weak
/// `backtrace`, the `_Unwind_*` family) never replace glibc's and libgcc's in the host.
/// Returns 1 when `unw_backtrace` is available, 0 otherwise (see the problem text).
/// The corresponding C functions are `dlopen` and `dlsym`.
int cunwind_load_unwinder(void);

/// Why libunwind could not be loaded (empty when it was).
const char *cunwind_unwinder_problem(void);

/// Captures up to `capacity` return addresses of the calling thread into `buffer`,
/// innermost first. Returns the number written (0 when unwinding fails). Walks with the
/// cached step rules of `cunwind_fast_backtrace`, and with libunwind's `unw_backtrace` where
/// those cannot follow a frame.
int cunwind_backtrace(void **buffer, int capacity);

/// The cached-rule walk alone: the return addresses from this function's caller out, as
/// `unw_backtrace` gives them, each frame stepped by the rule its call-frame information
/// (`.eh_frame`) gives, read once per return address and kept. Returns -1 when a frame's rule
/// is one the walk does not follow (libunwind's then), or before `cunwind_load_unwinder`.
int cunwind_fast_backtrace(void **buffer, int capacity);

/// libunwind's `unw_backtrace` alone (0 when libunwind is not loaded): the reference the
/// cached-rule walk is tested and measured against.
int cunwind_libunwind_backtrace(void **buffer, int capacity);

/// Captures the stack of the caller's caller's ... caller: the frames above the Swift
/// function that called this one, minus `skip_above_caller` more frames, up to `capacity`
/// return addresses. The cut is found by address (`__builtin_return_address`), so it does
/// not depend on how the compiler inlined the shim. Returns the number written. Walks as
/// `cunwind_backtrace` does.
int cunwind_backtrace_above_caller(uintptr_t *buffer, int capacity, int skip_above_caller);

/// What `cunwind_describe_address` found.
enum { CUNWIND_FOUND_MODULE = 1, CUNWIND_FOUND_SYMBOL = 2 };

/// Describes code address `ip` (use `ip - 1` for return addresses): the loaded object that
/// contains it (its path, the executable's for the main program, into `module`, its load
/// base into `base`) and the nearest function symbol at or below it, demangled when it is a
/// Swift name. Returns a combination of the `CUNWIND_FOUND_…` flags (0: no object holds it).
/// Each object's symbol tables (`.symtab` and `.dynsym`) are read once and kept, so only
/// the first address in an object pays for reading them. Symbol lookup follows libunwind's
/// `unw_get_proc_name` rule, except that an address past the end of the nearest symbol
/// (`st_size`) gets no symbol: in a stripped library the nearest exported name below a
/// static function is a neighbour's. C++ names are demangled with `__cxa_demangle`.
/// The corresponding C functions are `dl_iterate_phdr`, the runtime's `swift_demangle` and
/// the C++ ABI's `__cxa_demangle` (found with `dlsym`).
int cunwind_describe_address(uintptr_t ip, char *module, size_t module_capacity,
                             uintptr_t *base, char *symbol, size_t symbol_capacity);

/// The GNU build id of the loaded object that contains code address `ip`, read from its
/// `PT_NOTE` segments in memory (no file read), as lower-case hex into `hex` (see CElf's
/// `celf_loaded_build_id`). Returns 1, or 0 when no object holds `ip` or the object has no
/// build id. Called once per module, on the writer thread. The corresponding C function is
/// `dl_iterate_phdr`.
int cunwind_build_id(uintptr_t ip, char *hex, size_t capacity);

/// The demangled name of the anonymous context descriptor at `address` (`anonymous
/// descriptor Order #1 in App.makeOrder() -> ()`), from the `.symtab` of the object that
/// holds it: the runtime names a type declared inside a function `(unknown context at
/// $55d0…)`, an address that moves with every run. Returns 1 when found (0: no object holds
/// the address, or its symbols are stripped). The corresponding C functions are
/// `dl_iterate_phdr` and the runtime's `swift_demangle`.
int cunwind_name_anonymous_context(uintptr_t address, char *name, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
