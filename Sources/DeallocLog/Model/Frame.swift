import Foundation

/// One frame of a backtrace, as recorded, possibly resolved further by a ``Symbolizer``.
///
/// Only `ip` is guaranteed. `module` and `offset` allow offline symbolization; `symbol` is
/// the demangled name when the recorder (or a symbolizer) knew it; `file` and `line` come
/// only from a symbolizer. `buildID` is the module's GNU build id as the log recorded it
/// (the frame that introduced the module carries it, the reader copies it to every later
/// frame of the module in the session); a symbolizer uses a file only when it matches.
public struct Frame: Sendable, Hashable {
  public var ip: UInt64
  public var module: String?
  public var offset: UInt64?
  public var symbol: String?
  public var file: String?
  public var line: Int?
  public var buildID: String?

  public init(
    ip: UInt64, module: String? = nil, offset: UInt64? = nil, symbol: String? = nil,
    file: String? = nil, line: Int? = nil, buildID: String? = nil
  ) {
    self.ip = ip
    self.module = module
    self.offset = offset
    self.symbol = symbol
    self.file = file
    self.line = line
    self.buildID = buildID
  }

  /// The best human name: the symbol, else `module+0xoffset`, else the raw address.
  public var displayName: String {
    if let symbol { return symbol }
    if let module, let offset {
      return "\(module.split(separator: "/").last.map(String.init) ?? module)+0x"
        + String(offset, radix: 16)
    }
    return "0x" + String(ip, radix: 16)
  }

  /// A short name for sentences: the symbol without its module prefix and return type,
  /// e.g. `Feed.FeedScreen.close() -> ()` becomes `FeedScreen.close()`.
  ///
  /// Works on UTF-8 bytes (the markers are ASCII): findings name a frame per member, and
  /// Character-wise searching of long demangled names was a visible share of a report.
  public var shortName: String {
    guard let symbol else { return displayName }
    var name = Substring(symbol).utf8
    if let arrow = Self.lastRange(of: " -> ", in: name), arrow > name.startIndex,
      name[name.index(before: arrow)] == UInt8(ascii: ")")
    {
      name = name[..<arrow]
    }
    let headEnd =
      name.firstIndex {
        $0 == UInt8(ascii: "(") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: " ")
      } ?? name.endIndex
    let head = name[..<headEnd]
    if let firstDot = head.firstIndex(of: UInt8(ascii: ".")),
      head[head.index(after: firstDot)...].contains(UInt8(ascii: "."))
    {
      name = name[name.index(after: firstDot)...]
    }
    return String(Substring(name))
  }

  /// Where the last occurrence of `needle` in `text` starts.
  private static func lastRange(of needle: StaticString, in text: Substring.UTF8View)
    -> Substring.UTF8View.Index?
  {
    let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
    guard text.count >= pattern.count else { return nil }
    var index = text.index(text.endIndex, offsetBy: -pattern.count)
    while true {
      if text[index...].starts(with: pattern) { return index }
      if index == text.startIndex { return nil }
      index = text.index(before: index)
    }
  }

  /// `file:line` when a symbolizer resolved it.
  public var location: String? {
    guard let file else { return nil }
    if let line { return "\(file):\(line)" }
    return file
  }
}
