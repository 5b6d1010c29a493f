// Whether the preload records in this process. Checked in order, cheapest first:
// - the Swift toolchain's own programs (the driver, the compiler, the build system, the
//   linkers) are skipped silently: slow to record, and not what the user asked about;
// - DEALLOCTRACE_ONLY, a glob over the executable's file name (`run --only`), likewise;
// - a program that links CHolders itself (DeallocTrace) records through its own recorder;
// - no Swift function in the executable (no `$s` symbol): not a Swift program, said in one
//   line when the process is the command `run` started (DEALLOCTRACE_RUN_PID is its
//   parent), silent in the other processes a command starts (shells, make). The runtime's
//   presence cannot tell: this library itself needs libswiftCore (see preload.c).
// The linked copy is found by symbol: in the global scope (an executable linked with
// --export-dynamic, a shared DeallocTrace) and else in the executable's .symtab, read from
// its file with CElf (SwiftPM links the package's targets statically into the executable).
#define _GNU_SOURCE

#include <dlfcn.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "CElf.h"
#include "preload.h"

/// The toolchain's programs by file name (globs).
static const char *const toolchain_names[] = {
    "swift",        "swift-frontend", "swift-driver",  "swift-build",   "swift-test",
    "swift-run",    "swift-package",  "swiftc",        "swift-autolink-extract",
    "swift-plugin-server", "swift-symbolgraph-extract", "swift-api-digester",
    "swift-demangle", "swift-format", "swift-help",    "sourcekit-lsp", "docc",
    "clang*",       "llvm-*",         "lld*",          "ld",            "ld.*",
    "ar",           "gold",           "wasm-ld",       "lldb*",
    // A package's manifest, compiled and run by swift-build to read Package.swift.
    "*-manifest",
};

int preload_is_toolchain(const char *name) {
  for (size_t i = 0; i < sizeof toolchain_names / sizeof toolchain_names[0]; i++) {
    if (fnmatch(toolchain_names[i], name, 0) == 0) return 1;
  }
  return 0;
}

static void own_marker(void) {}

/// Whether `symbol` resolves, in the global scope, to an object other than this library.
static int defined_elsewhere(const char *symbol) {
  Dl_info own, found;
  if (dladdr((void *)own_marker, &own) == 0) return 0;
  void *address = dlsym(RTLD_DEFAULT, symbol);
  if (address != NULL && dladdr(address, &found) != 0 && found.dli_fbase != own.dli_fbase) {
    return 1;
  }
  address = dlsym(RTLD_NEXT, symbol);
  return address != NULL && dladdr(address, &found) != 0 && found.dli_fbase != own.dli_fbase;
}

typedef struct {
  int recorder;
  int queue;
  int swift;
} executable_symbols;

static int visit(const ElfW(Sym) *symbol, const char *name, void *context) {
  (void)symbol;
  executable_symbols *found = context;
  if (strcmp(name, "cholders_census_requested") == 0) found->recorder = 1;
  if (strcmp(name, "cdeallochooks_start_recorder_from_environment") == 0) found->queue = 1;
  if (strncmp(name, "$s", 2) == 0) found->swift = 1;
  return found->recorder && found->swift;
}

preload_decision preload_decide(void) {
  preload_decision decision = {0};
  char exe[4096];
  ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (length < 0) length = 0;
  exe[length] = 0;
  const char *slash = strrchr(exe, '/');
  const char *name = slash ? slash + 1 : exe;
  snprintf(decision.name, sizeof decision.name, "%s", name);
  // The name goes into lines on a terminal: no control byte or escape sequence gets there.
  for (char *c = decision.name; *c != 0; c++) {
    unsigned char byte = (unsigned char)*c;
    if (byte < 0x20 || byte == 0x7f || byte >= 0x80) *c = '?';
  }

  // Package plugins are built and run by swift-build from .build/plugins/.
  if (preload_is_toolchain(name) || strstr(exe, "/.build/plugins/") != NULL) {
    return decision;
  }
  const char *only = getenv("DEALLOCTRACE_ONLY");
  if (only != NULL && only[0] != 0 && fnmatch(only, name, 0) != 0) return decision;

  executable_symbols found = {0};
  found.recorder = defined_elsewhere("cholders_census_requested");
  found.queue = defined_elsewhere("cdeallochooks_start_recorder_from_environment");
  if (!found.recorder || !found.swift) {
    celf_file file;
    if (length > 0 && celf_map(exe, &file)) {
      celf_each_symbol(&file, STT_FUNC, CELF_SYMTAB_FIRST, visit, &found);
      celf_unmap(&file);
    }
  }
  if (found.recorder) {
    decision.host_links_recorder = 1;
    return decision;
  }
  if (!found.swift) {
    const char *run_pid = getenv("DEALLOCTRACE_RUN_PID");
    if (run_pid != NULL && atoi(run_pid) == (int)getppid()) {
      snprintf(decision.refusal, sizeof decision.refusal,
               "dealloctrace: not recording in %s: not a Swift program (no Swift function in "
               "its symbol tables)\n",
               decision.name);
    }
    return decision;
  }
  decision.uses_queue = found.queue;
  decision.record = 1;
  return decision;
}
