import DeallocLog

/// The name an output shows for a frame: its display name with what the recorder left
/// mangled demangled, and a merged specialization named by its function.
///
/// Why at rendering and not when the log is read: a finding's id hashes the names as the
/// log has them (``FindingID``, ``SymbolNormalization``), so that ids stay what earlier
/// reports and baselines printed; only what a reader sees changes.
enum FrameNaming {
  /// `frame`'s name for an output.
  static func name(_ frame: Frame) -> String {
    guard let symbol = frame.symbol else { return frame.displayName }
    return name(symbol)
  }

  /// A symbol's name for an output:
  /// - a symbol left mangled (`$s…`) demangled;
  /// - a mangled name inside a demangled one (Swift Testing's macro frames name their test
  ///   function `(… $s9FeedTests…fMu_ in _2C80…)`), demangled in place, without the
  ///   `unique name #1 of Z6a7… in ` the macro generated, so that it reads "peer macro @Test
  ///   expansion #1 of leaks in FeedTests.FeedTests";
  /// - `merged generic specialization <Feed.Cell> of Swift.Array.append(A) -> ()` as `merged
  ///   specialization of Swift.Array.append(A) -> ()`: functions that compile to the same code
  ///   are merged into one symbol named after whichever type the compiler saw first, so the
  ///   type there is usually not the one the program used.
  static func name(_ symbol: String) -> String {
    var name = SwiftDemangler.demangled(symbol) ?? symbol
    if name.contains("$s") { name = demanglingEmbedded(name) }
    return namingMergedFunction(name)
  }

  /// `text` with each `$s…` identifier that follows a non-identifier character demangled.
  private static func demanglingEmbedded(_ text: String) -> String {
    var result = ""
    var rest = Substring(text)
    while let start = rest.range(of: "$s") {
      let before = rest[..<start.lowerBound]
      result += before
      let token = rest[start.lowerBound...].prefix {
        $0 == "$" || ($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_"))
      }
      rest = rest[token.endIndex...]
      let follows = before.last.map { !($0.isASCII && ($0.isLetter || $0.isNumber)) } ?? true
      guard follows, let demangled = SwiftDemangler.demangled(String(token)) else {
        result += token
        continue
      }
      result += withoutUniqueName(demangled)
    }
    return result + rest
  }

  /// `unique name #1 of Z6a7a0d2aa0e18d8e in peer macro …` as `peer macro …`.
  private static func withoutUniqueName(_ name: String) -> String {
    guard name.hasPrefix("unique name #"), let of = name.range(of: " in ") else { return name }
    return String(name[of.upperBound...])
  }

  private static let specializations = [
    "generic specialization <", "function signature specialization <",
  ]

  /// `merged <specialization> <…> of f` and `merged specialized f` as `merged
  /// specialization of f`; other names unchanged.
  private static func namingMergedFunction(_ name: String) -> String {
    guard name.hasPrefix("merged ") else { return name }
    let rest = name.dropFirst("merged ".count)
    if rest.hasPrefix("specialized ") {
      return "merged specialization of " + rest.dropFirst("specialized ".count)
    }
    guard specializations.contains(where: rest.hasPrefix), let of = rest.range(of: "> of ")
    else { return name }
    return "merged specialization of " + rest[of.upperBound...]
  }
}
