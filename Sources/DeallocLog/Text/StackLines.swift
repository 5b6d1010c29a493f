/// How a text here lists a stack: a line per frame shown, then lines that count what it
/// left out.
///
/// Why a value passed in: which frames are the program's, and how a name is shown, are the
/// analysis's rules (its finding ids hash the program's frames; `DeallocAnalysis`'s
/// `StackListing` folds the rest into one line and demangles names), and the leak
/// assertions' failure messages (`DeallocTesting`) print these texts without linking the
/// analysis. They use ``callers``.
public struct StackLines: Sendable {
  /// The lines for `stack`, at most `limit` frames unless the listing shows every frame;
  /// empty when it shows none.
  public var lines: @Sendable (_ stack: [Frame], _ limit: Int) -> [String]

  public init(_ lines: @escaping @Sendable (_ stack: [Frame], _ limit: Int) -> [String]) {
    self.lines = lines
  }

  /// The frames after the leading machinery's (``Frame/isMachinery``), at most `limit`,
  /// with nothing counted.
  public static let callers = StackLines { stack, limit in
    stack.drop { $0.isMachinery }.prefix(limit).map(line)
  }

  /// A frame's display name and, when known, `file:line`.
  public static func line(_ frame: Frame) -> String {
    frame.displayName + (frame.location.map { " at \($0)" } ?? "")
  }
}
