import Glibc

/// Everything that stops the recorder, each with a one-line message for stderr.
public enum DeallocTraceError: Error, CustomStringConvertible, Equatable, Sendable {
  /// The log file could not be opened or created.
  case cannotOpen(path: String, errno: Int32)
  /// Writing to the log failed (disk full, I/O error).
  case writeFailed(path: String, errno: Int32)
  /// The log file was deleted while the process was writing it.
  case fileRemoved(path: String)
  /// `start(path:)` while a session is already recording.
  case alreadyRecording(path: String)
  /// A setting in the environment is not usable.
  case badSetting(name: String, value: String, expected: String)
  /// A setting in the environment is not usable, and `instead` applies (say which: a reader
  /// of the line must not have to guess what the recorder does without it).
  case ignoredSetting(name: String, value: String, expected: String, instead: String)
  /// libunwind could not be loaded; the session records without backtraces.
  case noUnwinder(reason: String)
  /// The path names an existing file that is not a log of this user (another user's, one
  /// others can write, or not a dealloctrace log): appending to it could corrupt or leak.
  case notOwnLog(path: String, reason: String)
  /// This process's previous session still holds the file (its writer is stuck closing).
  case heldByThisProcess(path: String)
  /// The log's directory did not exist and could not be created.
  case cannotCreateDirectory(path: String, errno: Int32)
  /// The writer's thread could not be started (out of memory or threads).
  case cannotStartWriter(errno: Int32)

  public var description: String {
    switch self {
    case .cannotOpen(let path, let code):
      return "dealloctrace: cannot open log \(escaped: path): \(Self.reason(code)); tracing is off"
    case .writeFailed(let path, let code):
      return
        "dealloctrace: cannot write log \(escaped: path): \(Self.reason(code)); tracing stopped"
    case .fileRemoved(let path):
      return "dealloctrace: log \(escaped: path) was removed while recording; tracing stopped"
    case .alreadyRecording(let path):
      return "dealloctrace: already recording to \(escaped: path); call finish() first"
    case .badSetting(let name, let value, let expected):
      return "dealloctrace: \(name)=\(escaped: value) is not \(expected)"
    case .ignoredSetting(let name, let value, let expected, let instead):
      return "dealloctrace: \(name)=\(escaped: value) is not \(expected); \(instead) applies"
    case .noUnwinder(let reason):
      return "dealloctrace: cannot load libunwind (\(reason)); recording without backtraces"
    case .notOwnLog(let path, let reason):
      return "dealloctrace: refusing to append to \(escaped: path): \(reason); tracing is off"
    case .heldByThisProcess(let path):
      return
        "dealloctrace: \(escaped: path) is still held by this process's previous session"
        + " (its writer did not finish); tracing is off"
    case .cannotCreateDirectory(let path, let code):
      return
        "dealloctrace: cannot create log directory \(escaped: path): \(Self.reason(code));"
        + " tracing is off"
    case .cannotStartWriter(let code):
      return
        "dealloctrace: cannot start the log writer's thread: \(Self.reason(code)); tracing is off"
    }
  }

  private static func reason(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
  }
}

extension String.StringInterpolation {
  /// `text` with what could act on a terminal or a CI log made visible: C0 and C1 controls,
  /// DEL, the line and paragraph separators and the bidirectional overrides become `\u{…}`,
  /// a backslash is doubled. Paths and settings come from the environment, and a newline in
  /// one must not turn the recorder's one line into two (or into a workflow command).
  mutating func appendInterpolation(escaped text: String) {
    var result = ""
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0..<0x20, 0x7f..<0xa0, 0x2028, 0x2029, 0x202a...0x202e, 0x2066...0x2069:
        result += "\\u{" + String(scalar.value, radix: 16) + "}"
      case 0x5c:
        result += "\\\\"
      default:
        result.unicodeScalars.append(scalar)
      }
    }
    appendLiteral(result)
  }
}
