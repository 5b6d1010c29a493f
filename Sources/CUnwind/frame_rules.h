// How to step from one x86-64 frame to its caller, read from the code's DWARF call-frame
// information (`.eh_frame`), and the cache of those rules the unwinder walks with. Not part
// of the public header.
#ifndef CUNWIND_FRAME_RULES_H
#define CUNWIND_FRAME_RULES_H

#include <dlfcn.h>
#include <stdint.h>

/// What a frame's rule says.
enum {
  /// The caller's frame is found by the rule's fields.
  FRAME_RULE_STEP = 1,
  /// The outermost frame: its return address is undefined (`_start`, a thread's start).
  FRAME_RULE_END = 2,
  /// The rule cannot be expressed here (no call-frame information, a signal frame, a CFA
  /// computed by an expression or from another register): libunwind walks this stack.
  FRAME_RULE_OTHER = 3,
};

/// Whether rules can be read here: x86-64 (the rules' registers) with glibc 2.35 or later
/// (`_dl_find_object`). Elsewhere every rule is OTHER and libunwind walks every stack.
#if defined(__x86_64__) && defined(DLFO_EH_SEGMENT_TYPE)
#define FRAME_RULES_SUPPORTED 1
#else
#define FRAME_RULES_SUPPORTED 0
#endif

/// The DWARF numbers of the registers a rule can name.
enum { FRAME_REGISTER_RBP = 6, FRAME_REGISTER_RSP = 7 };

/// One frame's way to its caller. The canonical frame address (CFA) is `cfa_register` plus
/// `cfa_offset`; it is the caller's stack pointer, and the return address is the word just
/// below it (the x86-64 `call` puts it there; a rule that says otherwise is OTHER). The
/// caller's RBP is saved at CFA + `rbp_offset`, or, when that is 0, is still in RBP.
typedef struct {
  int32_t cfa_offset;
  int16_t rbp_offset;
  uint8_t cfa_register;
  uint8_t kind;
} frame_rule;

/// The rule in force at code address `pc`: for a return address, the caller passes the
/// address of the call (the return address less one), which belongs to the calling
/// function even when the call is its last instruction. Finds the object with glibc's
/// `_dl_find_object` (no lock, safe in a signal handler) and the function's FDE through the
/// object's `.eh_frame_hdr` search table.
frame_rule frame_rule_at(uintptr_t pc);

#endif
