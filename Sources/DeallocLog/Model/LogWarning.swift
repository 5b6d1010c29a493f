/// A problem in the input that does not stop the report: the offending line is skipped.
public struct LogWarning: Sendable, Equatable, CustomStringConvertible {
  public enum Kind: String, Sendable, Equatable, Codable {
    /// The line is not a JSON object, or a required field is missing or of the wrong type.
    case malformedLine
    /// The last line of an input was cut short; its session is incomplete.
    case truncatedLine
    /// A record came before the first `session` record of its input.
    case recordBeforeSession
    /// Records of unknown kinds were skipped (counted per session).
    case unknownKinds
    /// The recorder reported records it could not write (`end.lost`).
    case lostRecords
    /// The log reached its size limit (`cut`): what came after is unknown.
    case logCut
    /// A record contradicts earlier ones (a release of an id never enqueued, a reused id…).
    case inconsistentRecord
    /// Offline symbolization did not work.
    case symbolization
    /// A directory entry was not read: not a regular file, unreadable, or a log-like file
    /// whose name does not end in `.jsonl`.
    case skippedInput
  }

  public var kind: Kind
  /// Where, when the warning is about one line.
  public var location: LogLocation?
  public var message: String

  public init(_ kind: Kind, at location: LogLocation?, _ message: String) {
    self.kind = kind
    self.location = location
    self.message = message
  }

  /// `file:line: message`, or just the message.
  public var description: String {
    if let location { return "\(location): \(message)" }
    return message
  }
}
