/// A problem in the input that does not stop the report: the offending line is skipped.
public struct LogWarning: Sendable, Equatable, CustomStringConvertible {
  /// What kind of problem. A struct with static members rather than an enum: the reader
  /// learns new problems to warn about, and a client's `switch` must not break when it does.
  /// The raw value is what `report --format json` writes as the warning's `kind`.
  public struct Kind: RawRepresentable, Sendable, Hashable, Codable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public init(from decoder: any Decoder) throws {
      rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.singleValueContainer()
      try container.encode(rawValue)
    }

    /// The line is not a JSON object, or a required field is missing or of the wrong type.
    public static let malformedLine = Kind(rawValue: "malformedLine")
    /// The last line of an input was cut short; its session is incomplete.
    public static let truncatedLine = Kind(rawValue: "truncatedLine")
    /// A record came before the first `session` record of its input.
    public static let recordBeforeSession = Kind(rawValue: "recordBeforeSession")
    /// Records of unknown kinds were skipped (counted per session).
    public static let unknownKinds = Kind(rawValue: "unknownKinds")
    /// The recorder reported records it could not write (`end.lost`).
    public static let lostRecords = Kind(rawValue: "lostRecords")
    /// The log reached its size limit (`cut`): what came after is unknown.
    public static let logCut = Kind(rawValue: "logCut")
    /// A record contradicts earlier ones (a release of an id never enqueued, a reused id…).
    public static let inconsistentRecord = Kind(rawValue: "inconsistentRecord")
    /// Offline symbolization did not work.
    public static let symbolization = Kind(rawValue: "symbolization")
    /// A directory entry was not read: not a regular file, unreadable, or a log-like file
    /// whose name does not end in `.jsonl`.
    public static let skippedInput = Kind(rawValue: "skippedInput")
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
