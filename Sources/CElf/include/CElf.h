#ifndef CELF_H
#define CELF_H

// ELF symbol tables read from a loaded object's file: the one reader of the recorder's
// symbolizer (CUnwind, function symbols) and of the holder scan (CHolders, data symbols and
// the runtime's private adapter pointer).
//
// Why read the file: the loaded image keeps only .dynsym, and a Swift binary's statics and
// private functions are in .symtab alone. Mapping and walking allocate nothing, so the
// holder scan can use it where it must not call malloc.

#include <link.h>
#include <stddef.h>

#include "sorted_rows.h"

/// An ELF file mapped read-only, its section header table checked to lie inside the file.
typedef struct {
  const unsigned char *image;
  size_t size;
  const ElfW(Shdr) *sections;
  size_t section_count;
} celf_file;

/// Maps the regular file at `path` when it is an ELF object of this process's class:
/// 1 on success, 0 otherwise (nothing left mapped).
int celf_map(const char *path, celf_file *file);

/// Unmaps what `celf_map` mapped. Only for a file none of whose names are kept: names point
/// into the mapping.
void celf_unmap(const celf_file *file);

/// Receives a defined symbol and its name (NUL-terminated inside its string table); a
/// nonzero result stops the walk.
typedef int (*celf_symbol_visitor)(const ElfW(Sym) *symbol, const char *name, void *context);

/// The order `celf_each_symbol` visits the tables in.
typedef enum {
  /// .symtab and .dynsym as their sections come: the order libunwind's linear scan settles
  /// aliases by.
  CELF_SECTION_ORDER,
  /// Every .symtab before any .dynsym: the complete table's names first.
  CELF_SYMTAB_FIRST,
} celf_table_order;

/// Calls `visit` for every defined symbol of `type` (`STT_FUNC`, `STT_OBJECT`) with a name,
/// in the tables whose bounds lie inside the file; returns 1 when `visit` stopped the walk.
int celf_each_symbol(const celf_file *file, int type, celf_table_order order,
                     celf_symbol_visitor visit, void *context);

/// A defined symbol with a nonzero value, as `celf_collect` lists it.
typedef struct {
  uintptr_t value;  // st_value: the address relative to the object's load base (ET_DYN)
  size_t size;  // st_size: 0 when the symbol table does not say
  const char *name;  // inside the mapping, which must then stay mapped
  size_t order;  // its place in the walk, which settles aliases (several names at one value)
} celf_symbol;

/// Lists the defined symbols of `type` with a nonzero value into `into`, in `order`; with
/// `into` NULL, only counts them. Returns how many. The callers count, allocate where they
/// keep memory (malloc, an arena), then list.
size_t celf_collect(const celf_file *file, int type, celf_table_order order, celf_symbol *into);

/// Room for a GNU build id as `celf_…_build_id` write it: lower-case hex and a NUL, for up
/// to 64 bytes (the linker's default, SHA-1, is 20; `--build-id=0x…` allows more).
enum { CELF_BUILD_ID_HEX_CAPACITY = 64 * 2 + 1 };

/// The GNU build id (`NT_GNU_BUILD_ID`) of an object loaded in this process, from the
/// `PT_NOTE` segments of its program headers (`dl_iterate_phdr`'s `dlpi_addr`, `dlpi_phdr`,
/// `dlpi_phnum`): memory already mapped, no file read. Writes it into `hex` as lower-case
/// hex, NUL-terminated (`capacity` at least `CELF_BUILD_ID_HEX_CAPACITY`); returns 1, or 0
/// when the object has none (or it does not fit).
int celf_loaded_build_id(uintptr_t base, const ElfW(Phdr) *segments, size_t count, char *hex,
                         size_t capacity);

/// The GNU build id of the ELF file at `path`, from its `PT_NOTE` segments (file offsets),
/// written as `celf_loaded_build_id` writes it: the same note the loaded object shows, so a
/// rebuilt file is told from the one a log was recorded with. 0 when the file is no ELF
/// object of this class or has no build id.
int celf_file_build_id(const char *path, char *hex, size_t capacity);

#endif
