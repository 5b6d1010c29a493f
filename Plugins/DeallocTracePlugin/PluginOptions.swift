import Foundation

/// The plugin's command line: `--filter` is the plugin's, every other option is `check`'s and
/// is forwarded to it, with its file names made absolute against the package directory
/// (the directory `swift package` runs in).
struct PluginOptions {
  struct UsageError: Error {
    var message: String
  }

  /// `check`'s options that take a value, and of those the ones that name a file.
  static let valueOptions: Set<String> = [
    "--baseline", "--write-baseline", "--suppressions", "--junit", "--format", "--stuck-after",
    "-o", "--output",
  ]
  static let fileOptions: Set<String> = [
    "--baseline", "--write-baseline", "--suppressions", "--junit", "-o", "--output",
  ]
  static let flagOptions: Set<String> = ["--github", "--symbolize"]

  static let help = """
    USAGE: swift package dealloctrace [--filter REGEX] [check options]

    Builds the package's tests and runs them (XCTest, then Swift Testing) with
    DEALLOCTRACE_LOG, DEALLOCTRACE_HOLDERS=1 and DEALLOCTRACE_LEAKS=1, writes the HTML report, and gates with 'dealloctrace check' on the logs.

    OPTIONS:
      --filter REGEX            run only the tests whose name matches (as swift test --filter)
      --baseline FILE, --write-baseline FILE, --suppressions FILE, --junit FILE, --github,
      --format FORMAT, --max-* N, --stuck-after DUR, --symbolize
                                forwarded to 'dealloctrace check' (see its --help); relative
                                files are relative to the package directory

    EXIT STATUS: 0 when the tests passed and the gate passed, non-zero otherwise.
    """

  var filter: String?
  var checkArguments: [String] = []
  var showHelp = false

  init(parsing arguments: [String], relativeTo packageDirectory: URL) throws {
    var remaining = arguments[...]
    while let option = remaining.popFirst() {
      if option == "-h" || option == "--help" {
        showHelp = true
        continue
      }
      if Self.flagOptions.contains(option) {
        checkArguments.append(option)
        continue
      }
      let takesValue =
        option == "--filter" || Self.valueOptions.contains(option) || option.hasPrefix("--max-")
      guard takesValue else {
        throw UsageError(message: "dealloctrace: unknown option '\(option)' (see --help)")
      }
      guard let value = remaining.popFirst() else {
        throw UsageError(message: "dealloctrace: \(option) needs a value")
      }
      if option == "--filter" {
        filter = value
      } else if Self.fileOptions.contains(option) && value != "-" {
        let url = URL(filePath: value, relativeTo: packageDirectory)
        checkArguments += [option, url.standardizedFileURL.path]
      } else {
        checkArguments += [option, value]
      }
    }
  }
}
