import DeallocAnalysis

#if canImport(Glibc)
  import Glibc
#endif

let usage = """
  USAGE: dealloctrace <command> [options]

  Reads dealloctrace logs (JSON lines, written by DeallocTrace) and explains them.

  OPTIONS:
    -h, --help      Show this help.
    --version       Print the version.
  """

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "--version":
  print("dealloctrace \(DeallocAnalysis.toolVersion)")
case nil, "-h", "--help":
  print(usage)
default:
  FileHandleStandardError.write("dealloctrace: unknown command '\(arguments[0])'; see --help\n")
  exit(2)
}
