#ifndef CELF_H
#define CELF_H

// ELF symbol tables read from a loaded object's file, and sorted for lookups by address: the
// one reader and index of the recorder's symbolizer (CUnwind, function symbols) and of the
// holder scan (CHolders, data symbols and the runtime's private adapter pointer).
//
// Why read the file: the loaded image keeps only .dynsym, and a Swift binary's statics and
// private functions are in .symtab alone. Mapping and walking allocate nothing, so the
// holder scan can use it where it must not call malloc.

#include <link.h>
#include <stddef.h>
#include <stdint.h>

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

/// A symbol table sorted by address: the one index of the symbolizer (CUnwind: function
/// symbols, anonymous context descriptors) and of the holder scan (CHolders: data symbols).
///
/// Memory: the rows are the caller's, from its allocator (malloc; the holder scan's arena,
/// which stays off malloc); the names point into the `celf_file` mapping, which must stay
/// mapped while the index is used. Sorting and lookups allocate nothing and take no lock;
/// building maps no file itself (the caller's `celf_map` does). Neither caller uses an index
/// in a signal handler or while other threads are parked (the census parks them, but
/// symbolizes its stacks after letting them go), and nothing here is promised for that.
/// Threads: an index is read-only once built, so lookups need no lock; each caller's cache
/// of indexes builds under its own lock.
typedef struct {
  const celf_symbol *rows;  // sorted by value, one row per value (aliases merged)
  size_t count;
} celf_symbol_index;

/// Which names an index keeps (nonzero: kept).
typedef int (*celf_symbol_filter)(const char *name);

/// `size` bytes of the caller's memory for an index's rows, or NULL.
typedef void *(*celf_allocator)(size_t size, void *context);

/// Sorts `count` rows by value in place, without memory of its own, and merges aliases
/// (several names at one value) into the row of the first in walk order (`order`: the name
/// libunwind's linear scan settles on), with the largest size any alias states. Returns how
/// many rows remain.
size_t celf_index_sort(celf_symbol *rows, size_t count);

/// Indexes the defined symbols of `type` of `file` with a nonzero value (`celf_collect`,
/// in `order`), those `keep` accepts (all with NULL), rows from `allocate`. 1 once rows were
/// allocated (the file must then stay mapped, even when `keep` kept none); 0, with an empty
/// index, when the file has no such symbol or `allocate` gave nothing.
int celf_index_build(celf_symbol_index *index, const celf_file *file, int type,
                     celf_table_order order, celf_symbol_filter keep,
                     celf_allocator allocate, void *context);

/// The last row whose value is at or below `value`, or NULL.
const celf_symbol *celf_index_at_or_below(const celf_symbol_index *index, uintptr_t value);

/// The symbol containing `value`: the nearest row at or below it whose extent covers it,
/// looking back over at most `nesting` rows (1: the nearest only; more: symbols that nest,
/// such as Swift's full type metadata around the type metadata symbol). A row of unknown
/// size (0) is taken to reach `unknown_size_reach` bytes: a word for data; for code
/// `SIZE_MAX` with `nesting` 1, so up to the next symbol, as libunwind takes it. NULL when
/// none covers it.
const celf_symbol *celf_index_containing(const celf_symbol_index *index, uintptr_t value,
                                         size_t unknown_size_reach, size_t nesting);

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
