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
  /// libunwind could not be loaded; the session records without backtraces.
  case noUnwinder(reason: String)

  public var description: String {
    switch self {
    case .cannotOpen(let path, let code):
      return "dealloctrace: cannot open log \(path): \(Self.reason(code)); tracing is off"
    case .writeFailed(let path, let code):
      return "dealloctrace: cannot write log \(path): \(Self.reason(code)); tracing stopped"
    case .fileRemoved(let path):
      return "dealloctrace: log \(path) was removed while recording; tracing stopped"
    case .alreadyRecording(let path):
      return "dealloctrace: already recording to \(path); call finish() first"
    case .badSetting(let name, let value, let expected):
      return "dealloctrace: \(name)=\(value) is not \(expected)"
    case .noUnwinder(let reason):
      return "dealloctrace: cannot load libunwind (\(reason)); recording without backtraces"
    }
  }

  private static func reason(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
  }
}
