extension Escaping {
  /// `text` for a terminal or a CI log, on one line: control characters, bidirectional
  /// overrides and line separators in their visible form (`\n`, `\u{1B}`, `\u{202E}`).
  ///
  /// Why: a label from a log must neither start a new line (in a GitHub Actions log a line
  /// beginning with `::` is a workflow command), nor send escape sequences to a terminal,
  /// nor reorder what a reviewer reads. Every text report, every `check` verdict and every
  /// line on standard error goes through here. A backslash is left as it is: `\u{1B}` in
  /// the output can therefore also come from those six characters in the input, which is
  /// the price of keeping ordinary names (`C:\path`) readable.
  public static func terminal(_ text: String) -> String {
    // Fast path on bytes: every character escaped here starts with a byte below 0x20, DEL,
    // 0xC2 (C1 controls) or 0xE2 (U+2028–U+2069); most text has none of them.
    guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 })
    else { return text }
    var out = ""
    out.reserveCapacity(text.utf8.count + 8)
    for scalar in text.unicodeScalars {
      if needsVisibleForm(scalar) {
        visible(scalar, into: &out)
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }
}
