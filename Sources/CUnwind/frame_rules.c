// Reads a frame's step rule from the DWARF call-frame information every x86-64 object
// carries for its unwinder (`.eh_frame`, found through `.eh_frame_hdr`'s sorted table).
//
// Only what a stack walk needs is kept: where the CFA is (RSP or RBP plus an offset), where
// the caller's RBP was saved, and whether the return address is where `call` put it. Any
// other shape (an expression, a CFA in another register, a signal frame) is OTHER, and the
// caller hands the whole walk to libunwind, which knows every shape. The trade-off: code
// that realigns its stack through another register (rare; some hand-written assembly) is
// unwound at libunwind's price.
//
// Every read stays inside the object's own call-frame sections, which the loader mapped;
// the lengths and offsets are the compiler's, as they are for libgcc's and libunwind's
// unwinders, which read the same bytes the same way.
#define _GNU_SOURCE

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "frame_rules.h"

// Pointer encodings (DW_EH_PE_*): the low nibble is the format, the next the base.
enum {
  PE_ABSPTR = 0x00,
  PE_ULEB128 = 0x01,
  PE_UDATA2 = 0x02,
  PE_UDATA4 = 0x03,
  PE_UDATA8 = 0x04,
  PE_SLEB128 = 0x09,
  PE_SDATA2 = 0x0a,
  PE_SDATA4 = 0x0b,
  PE_SDATA8 = 0x0c,
  PE_PCREL = 0x10,
  PE_DATAREL = 0x30,
  PE_INDIRECT = 0x80,
  PE_OMIT = 0xff,
};

/// The DWARF number of the return-address column on x86-64.
enum { RETURN_ADDRESS_COLUMN = 16 };
/// How deep DW_CFA_remember_state may nest; deeper is OTHER.
enum { REMEMBERED_ROWS = 8 };

static uint64_t read_uleb(const uint8_t **cursor, const uint8_t *end) {
  uint64_t value = 0;
  unsigned shift = 0;
  while (*cursor < end) {
    uint8_t byte = *(*cursor)++;
    if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
    shift += 7;
    if ((byte & 0x80) == 0) break;
  }
  return value;
}

static int64_t read_sleb(const uint8_t **cursor, const uint8_t *end) {
  int64_t value = 0;
  unsigned shift = 0;
  uint8_t byte = 0;
  while (*cursor < end) {
    byte = *(*cursor)++;
    if (shift < 64) value |= (int64_t)((uint64_t)(byte & 0x7f) << shift);
    shift += 7;
    if ((byte & 0x80) == 0) break;
  }
  if (shift < 64 && (byte & 0x40)) value |= -((int64_t)1 << shift);
  return value;
}

/// Reads a `size`-byte little-endian field at `*cursor`, sign-extended when `is_signed`.
static int read_fixed(const uint8_t **cursor, const uint8_t *end, size_t size, int is_signed,
                      uintptr_t *out) {
  if ((size_t)(end - *cursor) < size) return 0;
  uint64_t value = 0;
  memcpy(&value, *cursor, size);  // x86-64 is little-endian
  *cursor += size;
  if (is_signed && size < 8 && (value >> (size * 8 - 1)) & 1) value |= ~0ull << (size * 8);
  *out = (uintptr_t)value;
  return 1;
}

/// Reads a pointer in encoding `encoding` at `*cursor`; `data_base` is the base of
/// DW_EH_PE_datarel. Returns 0 for an encoding it does not know.
static int read_encoded(const uint8_t **cursor, const uint8_t *end, uint8_t encoding,
                        uintptr_t data_base, uintptr_t *out) {
  const uint8_t *start = *cursor;
  uintptr_t value;
  int read;
  switch (encoding & 0x0f) {
    case PE_ULEB128: value = (uintptr_t)read_uleb(cursor, end); read = 1; break;
    case PE_SLEB128: value = (uintptr_t)read_sleb(cursor, end); read = 1; break;
    case PE_UDATA2: read = read_fixed(cursor, end, 2, 0, &value); break;
    case PE_SDATA2: read = read_fixed(cursor, end, 2, 1, &value); break;
    case PE_UDATA4: read = read_fixed(cursor, end, 4, 0, &value); break;
    case PE_SDATA4: read = read_fixed(cursor, end, 4, 1, &value); break;
    case PE_ABSPTR:
    case PE_UDATA8:
    case PE_SDATA8: read = read_fixed(cursor, end, 8, 0, &value); break;
    default: return 0;
  }
  if (!read) return 0;
  if (value != 0) {
    switch (encoding & 0x70) {
      case 0: break;
      case PE_PCREL: value += (uintptr_t)start; break;
      case PE_DATAREL: value += data_base; break;
      default: return 0;
    }
    if (encoding & PE_INDIRECT) value = *(const uintptr_t *)value;
  }
  *out = value;
  return 1;
}

/// What the walk tracks of one row of the call-frame table.
typedef struct {
  int64_t cfa_offset;
  int64_t rbp_offset;  // with rbp_saved
  int64_t return_offset;  // with return_saved
  uint8_t cfa_register;
  uint8_t rbp_saved, return_saved, return_undefined;
  uint8_t unsupported;
} cfi_row;

/// A parsed CIE: what its FDEs need to be read and interpreted.
typedef struct {
  const uint8_t *instructions, *end;
  uint64_t code_align;
  int64_t data_align;
  uint8_t fde_encoding;
  uint8_t has_augmentation_data;
  uint8_t signal_frame;
} cie_info;

static int parse_cie(const uint8_t *cie, cie_info *info) {
  uint32_t length;
  memcpy(&length, cie, 4);
  if (length == 0 || length == 0xffffffffu) return 0;
  const uint8_t *p = cie + 4, *end = cie + 4 + length;
  uint32_t id;
  memcpy(&id, p, 4);
  p += 4;
  if (id != 0) return 0;
  uint8_t version = *p++;
  const char *augmentation = (const char *)p;
  size_t augmentation_length = strnlen(augmentation, (size_t)(end - p));
  p += augmentation_length + 1;
  if (p > end || strstr(augmentation, "eh") != NULL) return 0;
  memset(info, 0, sizeof *info);
  info->fde_encoding = PE_ABSPTR;
  info->code_align = read_uleb(&p, end);
  info->data_align = read_sleb(&p, end);
  uint64_t return_column = version == 1 ? *p++ : read_uleb(&p, end);
  if (return_column != RETURN_ADDRESS_COLUMN) return 0;
  if (augmentation[0] == 'z') {
    info->has_augmentation_data = 1;
    uint64_t data_length = read_uleb(&p, end);
    const uint8_t *data_end = p + data_length;
    for (const char *a = augmentation + 1; *a && p < data_end; a++) {
      uintptr_t ignored;
      if (*a == 'R') {
        info->fde_encoding = *p++;
      } else if (*a == 'L') {
        p++;
      } else if (*a == 'P') {
        uint8_t encoding = *p++;
        if (!read_encoded(&p, data_end, encoding & 0x7f, 0, &ignored)) return 0;
      }
    }
    p = data_end;
  } else if (augmentation[0] != 0) {
    return 0;
  }
  // 'S' carries no data, so it may follow the end of the augmentation data.
  info->signal_frame = strchr(augmentation, 'S') != NULL;
  if (p > end) return 0;
  info->instructions = p;
  info->end = end;
  return 1;
}

/// Sets register `reg`'s rule to "saved at CFA + offset" (or marks an unknowable rule for a
/// register the walk needs).
static void save_register(cfi_row *row, uint64_t reg, int64_t offset) {
  if (reg == FRAME_REGISTER_RBP) {
    row->rbp_saved = 1;
    row->rbp_offset = offset;
  } else if (reg == RETURN_ADDRESS_COLUMN) {
    row->return_saved = 1;
    row->return_undefined = 0;
    row->return_offset = offset;
  }
}

/// Any rule other than "saved at an offset" for `reg`: same value, undefined, in another
/// register, an expression.
static void other_rule(cfi_row *row, uint64_t reg, int undefined, int same) {
  if (reg == FRAME_REGISTER_RBP) {
    row->rbp_saved = 0;
    if (!same) row->unsupported = 1;
  } else if (reg == RETURN_ADDRESS_COLUMN) {
    row->return_saved = 0;
    row->return_undefined = (uint8_t)undefined;
    if (!undefined) row->unsupported = 1;
  }
}

static void restore_register(cfi_row *row, const cfi_row *initial, uint64_t reg) {
  if (reg == FRAME_REGISTER_RBP) {
    row->rbp_saved = initial->rbp_saved;
    row->rbp_offset = initial->rbp_offset;
  } else if (reg == RETURN_ADDRESS_COLUMN) {
    row->return_saved = initial->return_saved;
    row->return_undefined = initial->return_undefined;
    row->return_offset = initial->return_offset;
  }
}

/// The state of one run of call-frame instructions.
typedef struct {
  const cie_info *cie;
  const cfi_row *initial;  // the CIE's row, for DW_CFA_restore; NULL while running the CIE
  uintptr_t location;
  uintptr_t target;  // the pc whose row is wanted
  cfi_row row;
  cfi_row remembered[REMEMBERED_ROWS];
  int remembered_count;
} cfi_run;

/// Runs one of the opcodes that move the location (DW_CFA_advance_loc1, 2 and 4). Returns 0
/// when the target was passed.
static int run_advance(cfi_run *run, uint8_t op, const uint8_t **p, const uint8_t *end) {
  uintptr_t delta;
  size_t size = op == 0x02 ? 1 : op == 0x03 ? 2 : 4;
  if (!read_fixed(p, end, size, 0, &delta)) {
    run->row.unsupported = 1;
    return 0;
  }
  run->location += delta * run->cie->code_align;
  return run->location <= run->target;
}

/// Runs one of the opcodes that set the CFA's rule.
static void run_cfa_op(cfi_run *run, uint8_t op, const uint8_t **p, const uint8_t *end) {
  cfi_row *row = &run->row;
  int64_t align = run->cie->data_align;
  switch (op) {
    case 0x0c:  // def_cfa
      row->cfa_register = (uint8_t)read_uleb(p, end);
      row->cfa_offset = (int64_t)read_uleb(p, end);
      break;
    case 0x0d: row->cfa_register = (uint8_t)read_uleb(p, end); break;  // def_cfa_register
    case 0x0e: row->cfa_offset = (int64_t)read_uleb(p, end); break;  // def_cfa_offset
    case 0x12:  // def_cfa_sf
      row->cfa_register = (uint8_t)read_uleb(p, end);
      row->cfa_offset = read_sleb(p, end) * align;
      break;
    case 0x13: row->cfa_offset = read_sleb(p, end) * align; break;  // def_cfa_offset_sf
    default: row->unsupported = 1; break;  // def_cfa_expression
  }
}

/// Runs one of the opcodes that set a register's rule.
static void run_register_op(cfi_run *run, uint8_t op, const uint8_t **p, const uint8_t *end) {
  cfi_row *row = &run->row;
  int64_t align = run->cie->data_align;
  uint64_t reg = read_uleb(p, end);
  switch (op) {
    case 0x05: save_register(row, reg, (int64_t)read_uleb(p, end) * align); break;
    case 0x06: if (run->initial) restore_register(row, run->initial, reg); break;
    case 0x07: other_rule(row, reg, 1, 0); break;  // undefined
    case 0x08: other_rule(row, reg, 0, 1); break;  // same_value
    case 0x10:  // expression
    case 0x16:  // val_expression
      *p += read_uleb(p, end);
      other_rule(row, reg, 0, 0);
      break;
    case 0x11: save_register(row, reg, read_sleb(p, end) * align); break;  // offset_extended_sf
    case 0x2f: save_register(row, reg, -(int64_t)read_uleb(p, end) * align); break;
    default:  // register, val_offset, val_offset_sf: a second operand
      read_uleb(p, end);
      other_rule(row, reg, 0, 0);
      break;
  }
}

/// Runs one extended opcode (those with a zero high part). Returns 0 to stop: the target
/// was passed, or the row became unsupported.
static int run_extended(cfi_run *run, uint8_t op, const uint8_t **p, const uint8_t *end) {
  cfi_row *row = &run->row;
  switch (op) {
    case 0x00: return 1;  // nop
    case 0x02: case 0x03: case 0x04: return run_advance(run, op, p, end);
    case 0x0a:  // remember_state
      if (run->remembered_count == REMEMBERED_ROWS) break;
      run->remembered[run->remembered_count++] = *row;
      return 1;
    case 0x0b:  // restore_state
      if (run->remembered_count == 0) break;
      *row = run->remembered[--run->remembered_count];
      return 1;
    case 0x0c: case 0x0d: case 0x0e: case 0x0f: case 0x12: case 0x13:
      run_cfa_op(run, op, p, end);
      return !row->unsupported;
    case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x10: case 0x11:
    case 0x14: case 0x15: case 0x16: case 0x2f:
      run_register_op(run, op, p, end);
      return 1;
    case 0x2e: read_uleb(p, end); return 1;  // GNU_args_size
    default: break;  // set_loc and vendor opcodes
  }
  row->unsupported = 1;
  return 0;
}

/// Runs the instructions in [p, end) until the row for the target pc is complete.
static void run_instructions(cfi_run *run, const uint8_t *p, const uint8_t *end) {
  cfi_row *row = &run->row;
  while (p < end && !row->unsupported) {
    uint8_t byte = *p++;
    uint8_t high = byte & 0xc0, low = byte & 0x3f;
    if (high == 0x40) {  // advance_loc
      run->location += low * run->cie->code_align;
      if (run->location > run->target) return;
    } else if (high == 0x80) {  // offset
      save_register(row, low, (int64_t)read_uleb(&p, end) * run->cie->data_align);
    } else if (high == 0xc0) {  // restore
      if (run->initial) restore_register(row, run->initial, low);
    } else if (!run_extended(run, low, &p, end)) {
      return;
    }
  }
}

/// The rule a completed row gives.
static frame_rule rule_of_row(const cfi_row *row) {
  frame_rule rule = {0, 0, 0, FRAME_RULE_OTHER};
  if (row->unsupported) return rule;
  if (row->return_undefined) {
    rule.kind = FRAME_RULE_END;
    return rule;
  }
  uint8_t cfa = row->cfa_register;
  int cfa_known = cfa == FRAME_REGISTER_RSP || cfa == FRAME_REGISTER_RBP;
  if (!cfa_known || !row->return_saved || row->return_offset != -8) return rule;
  if (row->cfa_offset < 8 || row->cfa_offset > INT32_MAX) return rule;
  if (row->rbp_saved && (row->rbp_offset >= 0 || row->rbp_offset < INT16_MIN)) return rule;
  rule.cfa_offset = (int32_t)row->cfa_offset;
  rule.rbp_offset = row->rbp_saved ? (int16_t)row->rbp_offset : 0;
  rule.cfa_register = row->cfa_register;
  rule.kind = FRAME_RULE_STEP;
  return rule;
}

/// The FDE whose range covers `pc`, found in the object's `.eh_frame_hdr` table; NULL when
/// none does or the table is not the usual sorted 4-byte one.
static const uint8_t *find_fde(const uint8_t *header, uintptr_t pc) {
  if (header[0] != 1 || header[3] != (PE_DATAREL | PE_SDATA4)) return NULL;
  const uint8_t *p = header + 4;
  const uint8_t *unbounded = p + 16;  // two encoded words at most, then the table
  uintptr_t eh_frame, count;
  if (!read_encoded(&p, unbounded, header[1], (uintptr_t)header, &eh_frame)) return NULL;
  if (!read_encoded(&p, unbounded, header[2], (uintptr_t)header, &count)) return NULL;
  const int32_t *table = (const int32_t *)(const void *)p;
  intptr_t target = (intptr_t)(pc - (uintptr_t)header);
  size_t low = 0, high = count;
  while (low < high) {  // the first entry whose start is past pc
    size_t middle = low + (high - low) / 2;
    int32_t start;
    memcpy(&start, &table[2 * middle], 4);
    if ((intptr_t)start <= target) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  if (low == 0) return NULL;
  int32_t offset;
  memcpy(&offset, &table[2 * (low - 1) + 1], 4);
  return header + offset;
}

/// The rule at `pc` from FDE `fde`, or OTHER when `pc` lies outside it.
static frame_rule rule_from_fde(const uint8_t *fde, uintptr_t pc) {
  frame_rule other = {0, 0, 0, FRAME_RULE_OTHER};
  uint32_t length, cie_offset;
  memcpy(&length, fde, 4);
  if (length == 0 || length == 0xffffffffu) return other;
  const uint8_t *p = fde + 4, *end = fde + 4 + length;
  memcpy(&cie_offset, p, 4);
  cie_info cie;
  if (cie_offset == 0 || !parse_cie(p - cie_offset, &cie) || cie.signal_frame) return other;
  p += 4;
  uintptr_t start, range;
  if (!read_encoded(&p, end, cie.fde_encoding, 0, &start)) return other;
  if (!read_encoded(&p, end, cie.fde_encoding & 0x0f, 0, &range)) return other;
  if (pc < start || pc - start >= range) return other;
  if (cie.has_augmentation_data) p += read_uleb(&p, end);
  cfi_run run;
  memset(&run, 0, sizeof run);
  run.cie = &cie;
  run.location = start;
  run.target = pc;
  run.row.rbp_saved = 0;
  run_instructions(&run, cie.instructions, cie.end);
  cfi_row initial = run.row;
  run.initial = &initial;
  run.location = start;
  run.remembered_count = 0;
  run_instructions(&run, p, end);
  return rule_of_row(&run.row);
}

frame_rule frame_rule_at(uintptr_t pc) {
  frame_rule other = {0, 0, 0, FRAME_RULE_OTHER};
#if !FRAME_RULES_SUPPORTED
  (void)pc;
  (void)find_fde;
  (void)rule_from_fde;
  return other;
#else
  struct dl_find_object object;
  if (_dl_find_object((void *)pc, &object) != 0 || object.dlfo_eh_frame == NULL) return other;
  const uint8_t *fde = find_fde((const uint8_t *)object.dlfo_eh_frame, pc);
  return fde == NULL ? other : rule_from_fde(fde, pc);
#endif
}
