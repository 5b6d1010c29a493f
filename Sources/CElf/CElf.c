#define _GNU_SOURCE

#include "CElf.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int celf_map(const char *path, celf_file *file) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat status;
  if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) ||
      (size_t)status.st_size < sizeof(ElfW(Ehdr))) {
    close(fd);
    return 0;
  }
  size_t size = (size_t)status.st_size;
  const unsigned char *image = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (image == MAP_FAILED) return 0;
  const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)image;
  int usable = memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 &&
               header->e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
               header->e_shentsize == sizeof(ElfW(Shdr)) && header->e_shoff < size &&
               header->e_shnum <= (size - header->e_shoff) / sizeof(ElfW(Shdr));
  if (!usable) {
    munmap((void *)image, size);
    return 0;
  }
  file->image = image;
  file->size = size;
  file->sections = (const ElfW(Shdr) *)(image + header->e_shoff);
  file->section_count = header->e_shnum;
  return 1;
}

void celf_unmap(const celf_file *file) { munmap((void *)file->image, file->size); }

/// The symbols of one table section; 1 when `visit` stopped the walk.
static int each_in_table(const celf_file *file, const ElfW(Shdr) *table, int type,
                         celf_symbol_visitor visit, void *context) {
  if (table->sh_entsize != sizeof(ElfW(Sym)) || table->sh_link >= file->section_count) return 0;
  const ElfW(Shdr) *strings = &file->sections[table->sh_link];
  if (table->sh_offset > file->size || table->sh_size > file->size - table->sh_offset) return 0;
  if (strings->sh_offset > file->size || strings->sh_size > file->size - strings->sh_offset) {
    return 0;
  }
  const ElfW(Sym) *symbols = (const ElfW(Sym) *)(file->image + table->sh_offset);
  const char *names = (const char *)(file->image + strings->sh_offset);
  for (size_t i = 0; i < table->sh_size / sizeof(ElfW(Sym)); i++) {
    const ElfW(Sym) *symbol = &symbols[i];
    if (ELF64_ST_TYPE(symbol->st_info) != type || symbol->st_shndx == SHN_UNDEF) continue;
    if (symbol->st_name == 0 || symbol->st_name >= strings->sh_size) continue;
    const char *name = names + symbol->st_name;
    if (memchr(name, 0, strings->sh_size - symbol->st_name) == NULL) continue;
    if (visit(symbol, name, context)) return 1;
  }
  return 0;
}

int celf_each_symbol(const celf_file *file, int type, celf_table_order order,
                     celf_symbol_visitor visit, void *context) {
  static const uint32_t symtab_first[2] = {SHT_SYMTAB, SHT_DYNSYM};
  int passes = order == CELF_SYMTAB_FIRST ? 2 : 1;
  for (int pass = 0; pass < passes; pass++) {
    for (size_t i = 0; i < file->section_count; i++) {
      const ElfW(Shdr) *table = &file->sections[i];
      int wanted = order == CELF_SYMTAB_FIRST
                       ? table->sh_type == symtab_first[pass]
                       : table->sh_type == SHT_SYMTAB || table->sh_type == SHT_DYNSYM;
      if (wanted && each_in_table(file, table, type, visit, context)) return 1;
    }
  }
  return 0;
}

struct collect {
  celf_symbol *into;
  size_t count;
};

static int collect_symbol(const ElfW(Sym) *symbol, const char *name, void *context) {
  struct collect *c = context;
  if (symbol->st_value == 0) return 0;
  if (c->into) {
    c->into[c->count].value = (uintptr_t)symbol->st_value;
    c->into[c->count].size = (size_t)symbol->st_size;
    c->into[c->count].name = name;
    c->into[c->count].order = c->count;
  }
  c->count++;
  return 0;
}

size_t celf_collect(const celf_file *file, int type, celf_table_order order, celf_symbol *into) {
  struct collect c = {into, 0};
  celf_each_symbol(file, type, order, collect_symbol, &c);
  return c.count;
}

/// The build id among the notes in `notes` (`size` bytes, entries padded to `alignment`:
/// 4, or 8 in a segment aligned so, like `.note.gnu.property`'s), as hex into `hex`; 1 when
/// found and it fits.
static int build_id_in_notes(const unsigned char *notes, size_t size, size_t alignment,
                             char *hex, size_t capacity) {
  static const char digits[] = "0123456789abcdef";
  size_t pad = alignment == 8 ? 7 : 3;
  size_t at = 0;
  while (size - at >= sizeof(ElfW(Nhdr))) {
    const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)(notes + at);
    size_t name_size = ((size_t)note->n_namesz + pad) & ~pad;
    size_t description_size = ((size_t)note->n_descsz + pad) & ~pad;
    at += sizeof(ElfW(Nhdr));
    if (name_size > size - at || description_size > size - at - name_size) return 0;
    const unsigned char *name = notes + at;
    const unsigned char *description = name + name_size;
    if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
      if (note->n_descsz == 0 || capacity == 0 || note->n_descsz > (capacity - 1) / 2) return 0;
      for (size_t i = 0; i < note->n_descsz; i++) {
        hex[2 * i] = digits[description[i] >> 4];
        hex[2 * i + 1] = digits[description[i] & 15];
      }
      hex[2 * note->n_descsz] = 0;
      return 1;
    }
    at += name_size + description_size;
  }
  return 0;
}

int celf_loaded_build_id(uintptr_t base, const ElfW(Phdr) *segments, size_t count, char *hex,
                         size_t capacity) {
  for (size_t i = 0; i < count; i++) {
    if (segments[i].p_type != PT_NOTE) continue;
    const unsigned char *notes = (const unsigned char *)(base + segments[i].p_vaddr);
    if (build_id_in_notes(notes, segments[i].p_memsz, segments[i].p_align, hex, capacity)) {
      return 1;
    }
  }
  return 0;
}

int celf_file_build_id(const char *path, char *hex, size_t capacity) {
  celf_file file;
  if (!celf_map(path, &file)) return 0;
  const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)file.image;
  int found = 0;
  if (header->e_phentsize == sizeof(ElfW(Phdr)) && header->e_phoff < file.size &&
      header->e_phnum <= (file.size - header->e_phoff) / sizeof(ElfW(Phdr))) {
    const ElfW(Phdr) *segments = (const ElfW(Phdr) *)(file.image + header->e_phoff);
    for (size_t i = 0; i < header->e_phnum && !found; i++) {
      const ElfW(Phdr) *segment = &segments[i];
      if (segment->p_type != PT_NOTE) continue;
      if (segment->p_offset > file.size || segment->p_filesz > file.size - segment->p_offset) {
        continue;
      }
      found = build_id_in_notes(file.image + segment->p_offset, segment->p_filesz,
                                segment->p_align, hex, capacity);
    }
  }
  celf_unmap(&file);
  return found;
}
