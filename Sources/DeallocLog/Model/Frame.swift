import Foundation

/// One frame of a backtrace, as recorded, possibly resolved further by a ``Symbolizer``.
///
/// Only `ip` is guaranteed. `module` and `offset` allow offline symbolization; `symbol` is
/// the demangled name when the recorder (or a symbolizer) knew it; `file` and `line` come
/// only from a symbolizer.
public struct Frame: Sendable, Hashable {
  public var ip: UInt64
  public var module: String?
  public var offset: UInt64?
  public var symbol: String?
  public var file: String?
  public var line: Int?

  public init(
    ip: UInt64, module: String? = nil, offset: UInt64? = nil, symbol: String? = nil,
    file: String? = nil, line: Int? = nil
  ) {
    self.ip = ip
    self.module = module
    self.offset = offset
    self.symbol = symbol
    self.file = file
    self.line = line
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
  public var shortName: String {
    guard let symbol else { return displayName }
    var name = Substring(symbol)
    if let arrow = name.range(of: " -> ", options: .backwards),
      name[..<arrow.lowerBound].last == ")"
    {
      name = name[..<arrow.lowerBound]
    }
    let head = name.prefix { $0 != "(" && $0 != "<" && $0 != " " }
    let parts = head.split(separator: ".", omittingEmptySubsequences: false)
    if parts.count >= 3 {
      name = name.dropFirst(parts[0].count + 1)
    }
    return String(name)
  }

  /// `file:line` when a symbolizer resolved it.
  public var location: String? {
    guard let file else { return nil }
    if let line { return "\(file):\(line)" }
    return file
  }
}
