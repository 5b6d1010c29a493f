import Foundation

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
  /// files (sorted by name, not recursive), `-` into standard input.
  ///
  /// - Throws: ``AnalysisError/noInput``, ``AnalysisError/inputNotFound(path:)``,
  ///   ``AnalysisError/noLogsInDirectory(path:)`` or ``AnalysisError/inputUnreadable(path:reason:)``.
  public static func resolve(_ arguments: [String]) throws(AnalysisError) -> [LogInput] {
    guard !arguments.isEmpty else { throw .noInput }
    var inputs: [LogInput] = []
    for argument in arguments {
      if argument == "-" {
        inputs.append(.standardInput)
        continue
      }
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
        throw .inputNotFound(path: argument)
      }
      guard isDirectory.boolValue else {
        inputs.append(LogInput(path: argument))
        continue
      }
      let names: [String]
      do {
        names = try FileManager.default.contentsOfDirectory(atPath: argument)
      } catch {
        throw .inputUnreadable(path: argument, reason: "cannot list the directory")
      }
      let logs = names.filter { $0.hasSuffix(".jsonl") }.sorted()
      guard !logs.isEmpty else { throw .noLogsInDirectory(path: argument) }
      let prefix = argument.hasSuffix("/") ? argument : argument + "/"
      inputs.append(contentsOf: logs.map { LogInput(path: prefix + $0) })
    }
    return inputs
  }
}
