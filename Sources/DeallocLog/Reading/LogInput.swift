import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// One readable input: a file, or standard input.
public struct LogInput: Sendable, Hashable {
  /// The path to open, or `nil` for standard input.
  public var path: String?
  /// How messages name it: the path as given, or `<stdin>`.
  public var displayName: String

  public static let standardInput = LogInput(path: nil, displayName: "<stdin>")

  public init(path: String) {
    self.path = path
    self.displayName = path
  }

  /// A file named differently in messages (tests use repository-relative names).
  public init(path: String, displayName: String) {
    self.path = path
    self.displayName = displayName
  }

  private init(path: String?, displayName: String) {
    self.path = path
    self.displayName = displayName
  }

  /// Expands command-line arguments: files as they are, directories into their `*.jsonl`
  /// files (sorted by name, not recursive), `-` into standard input. Warnings about
  /// directory entries left out are dropped; ``resolveReporting(_:)`` returns them.
  public static func resolve(_ arguments: [String]) throws(AnalysisError) -> [LogInput] {
    try resolveReporting(arguments).inputs
  }

  /// As ``resolve(_:)``, with a warning for each directory entry it did not read.
  ///
  /// A named file is read whatever it is (a pipe from `<(…)` is a fine log). In a directory,
  /// only regular `*.jsonl` files are read: a FIFO would block the read forever, and a
  /// subdirectory, a device or a symbolic link loop named `x.jsonl` is no log, so each is
  /// skipped with a warning and the rest are read. Files that look like logs but do not end
  /// in `.jsonl` (`x.jsonl.4242`, an older recorder's fallback, or `dealloctrace.*`) are not
  /// read either, but are named, so that a CI gate cannot pass silently past one.
  ///
  /// - Throws: ``AnalysisError/noInput``, ``AnalysisError/inputNotFound(path:)``,
  ///   ``AnalysisError/noLogsInDirectory(path:)`` or ``AnalysisError/inputUnreadable(path:reason:)``.
  public static func resolveReporting(_ arguments: [String]) throws(AnalysisError) -> (
    inputs: [LogInput], warnings: [LogWarning]
  ) {
    guard !arguments.isEmpty else { throw .noInput }
    var inputs: [LogInput] = []
    var warnings: [LogWarning] = []
    for argument in arguments {
      if argument == "-" {
        inputs.append(.standardInput)
        continue
      }
      var info = stat()
      guard stat(argument, &info) == 0 else {
        let code = errno
        if code == ENOENT || code == ENOTDIR { throw .inputNotFound(path: argument) }
        throw .inputUnreadable(path: argument, reason: reason(code))
      }
      guard info.st_mode & S_IFMT == S_IFDIR else {
        inputs.append(LogInput(path: argument))
        continue
      }
      let names: [String]
      do {
        names = try FileManager.default.contentsOfDirectory(atPath: argument)
      } catch {
        let code = access(argument, R_OK | X_OK) == 0 ? EIO : errno
        throw .inputUnreadable(path: argument, reason: "cannot list the directory: \(reason(code))")
      }
      let prefix = argument.hasSuffix("/") ? argument : argument + "/"
      var found = 0
      var firstProblem: String?
      for name in names.sorted() {
        let path = prefix + name
        guard name.hasSuffix(".jsonl") else {
          if looksLikeLog(name) {
            warnings.append(
              LogWarning(
                .skippedInput, at: nil,
                "\(path): looks like a dealloctrace log but does not end in .jsonl; not read"
                  + " (rename it, or name it on the command line)"))
          }
          continue
        }
        if let problem = unreadableEntry(path) {
          warnings.append(LogWarning(.skippedInput, at: nil, "\(path): \(problem); skipped"))
          firstProblem = firstProblem ?? "\(name): \(problem)"
          continue
        }
        inputs.append(LogInput(path: path))
        found += 1
      }
      if found == 0, let firstProblem {
        // Every *.jsonl entry was skipped: say why, since the warnings die with the run.
        throw .inputUnreadable(
          path: argument, reason: "no *.jsonl entry is a log file (\(firstProblem))")
      }
      if found == 0 { throw .noLogsInDirectory(path: argument) }
    }
    return (inputs, warnings)
  }

  /// Why the directory entry at `path` cannot be read as a log, or `nil` when it can.
  private static func unreadableEntry(_ path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return reason(errno) }
    switch info.st_mode & S_IFMT {
    case S_IFREG:
      return access(path, R_OK) == 0 ? nil : reason(errno)
    case S_IFDIR: return "a directory, not a log file"
    case S_IFIFO: return "a FIFO, not a log file (reading it could wait forever)"
    case S_IFSOCK: return "a socket, not a log file"
    default: return "a device, not a log file"
    }
  }

  /// A recorder fallback or rotation that a directory input does not read: `NAME.jsonl.DIGITS`
  /// or `dealloctrace.*`, except the reports `dealloctrace` itself writes (`.html`, `.json`,
  /// `.md`, `.txt`, `.xml`), which often sit next to the logs.
  private static func looksLikeLog(_ name: String) -> Bool {
    if name.hasPrefix("dealloctrace.") {
      return ![".html", ".json", ".md", ".txt", ".xml"].contains { name.hasSuffix($0) }
    }
    guard let range = name.range(of: ".jsonl.", options: .backwards) else { return false }
    let tail = name[range.upperBound...]
    return !tail.isEmpty && tail.allSatisfy(\.isASCII) && tail.allSatisfy(\.isNumber)
  }

  /// `errno` in words, lower-case as the other messages ("permission denied").
  static func reason(_ code: Int32) -> String {
    switch code {
    case EACCES, EPERM: return "permission denied"
    case ENOENT: return "no such file or directory (a dangling link?)"
    case ELOOP: return "too many levels of symbolic links (a link loop?)"
    default: return String(cString: strerror(code)).lowercased()
    }
  }
}
