import DeallocAnalysis
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The subcommands, in the order `--help` lists them. Adding one is one line here.
let commands: [any Command.Type] = [
  ReportCommand.self,
  ExplainCommand.self,
  CheckCommand.self,
  DiffCommand.self,
  ExportCommand.self,
  RunCommand.self,
]

let usage = """
  USAGE: dealloctrace <command> [options]

  Reads dealloctrace logs (JSON lines, written by DeallocTrace) and explains them.

  COMMANDS:
  \(commands.map { "  \($0.name.padding(toLength: 10, withPad: " ", startingAt: 0))\($0.summary)" }.joined(separator: "\n"))

  Run 'dealloctrace <command> --help' for a command's options.

  OPTIONS:
    -h, --help      Show this help.
    --version       Print the version.

  EXIT STATUS:
    0  a report was produced (with findings or without), or a gate passed
    1  a gate failed, or 'diff' found new findings
    2  unusable input or a usage error
  """

// A file size limit (`ulimit -f`) makes a write fail with EFBIG, which Output reports and
// cleans up after, instead of killing the process mid-write.
signal(SIGXFSZ, SIG_IGN)
let arguments = Array(CommandLine.arguments.dropFirst())
// The CLI is its own launcher for the tools `--symbolize` runs (see BoundedChild).
if arguments.first == BoundedChild.launcherCommand {
  BoundedChild.execBounded(Array(arguments.dropFirst()))
}
switch arguments.first {
case "--version":
  print("dealloctrace \(DeallocAnalysis.toolVersion)")
case nil, "-h", "--help", "help":
  print(usage)
case let name?:
  guard let command = commands.first(where: { $0.name == name }) else {
    StandardError.line("unknown command '\(name)'; see --help")
    exit(ExitStatus.unusable.rawValue)
  }
  let rest = Array(arguments.dropFirst())
  let ownArguments = rest.prefix { $0 != "--" }  // `run`'s command has options of its own
  if ownArguments.contains("-h") || ownArguments.contains("--help") {
    print(command.help)
    exit(ExitStatus.success.rawValue)
  }
  do {
    exit(try command.run(rest).rawValue)
  } catch {
    let (status, message) = ExitStatus.of(error)
    StandardError.line(message, command: name)
    exit(status.rawValue)
  }
}
