/// Where a test asked to watch an object, so that a failure points at that line.
///
/// Both test frameworks' conventions fit in it: XCTest passes `#filePath` and `#line`,
/// Swift Testing a `SourceLocation` (which also wants `#fileID` and `#column`).
public struct CallSite: Sendable, Hashable, CustomStringConvertible {
  /// The source file's module-qualified name, `Module/File.swift`.
  public var fileID: String
  /// The source file's full path.
  public var filePath: String
  public var line: Int
  public var column: Int

  public init(fileID: String, filePath: String, line: Int, column: Int) {
    self.fileID = fileID
    self.filePath = filePath
    self.line = line
    self.column = column
  }

  /// The call site of XCTest's `#filePath` and `#line`. The file's module is taken to be
  /// its folder's name, as in SwiftPM's `Tests/Module/File.swift` layout.
  public init(file: StaticString, line: UInt) {
    let path = "\(file)"
    let components = path.split(separator: "/")
    self.init(
      fileID: components.suffix(2).joined(separator: "/"),
      filePath: path,
      line: Int(line),
      column: 1
    )
  }

  /// `File.swift:42`, as a failure message shows it.
  public var description: String {
    let fileName = filePath.split(separator: "/").last.map(String.init) ?? filePath
    return "\(fileName):\(line)"
  }
}
