/// How text that came from input (a log, a file name, a suppressions file) is written in
/// each output format: one policy per format, each in its own file of this folder.
///
/// Why one place: the renderers used to carry eight copies that disagreed (`\u{1B}` in one
/// report, `\u{1b}` in the next; U+2028 escaped in `check` but not in `report`), so the same
/// type name printed differently per command and each fix reached one copy. Every renderer,
/// warning and stderr line now goes through exactly one function per format. The trade-off:
/// a renderer cannot tune escaping for its own corner; a format that needs a variant (an XML
/// attribute, a workflow-command property) gets it here, next to its base policy.
///
/// The shared rule: C0 and C1 control characters, DEL, the bidirectional overrides and
/// isolates (U+202A–U+202E, U+2066–U+2069) and the line and paragraph separators
/// (U+2028, U+2029) are never written as they are in a human-readable format. Where a
/// format has no escape of its own for them they are shown as ``visible(_:into:)`` writes
/// them: `\n`, `\r`, `\t`, or `\u{1B}` (upper-case hex), the same in every format.
public enum Escaping {
  /// Whether `scalar` is a control character: C0, DEL or C1.
  static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
  }

  /// Whether `scalar` changes how the text around it is laid out without being seen: the
  /// bidirectional embeddings, overrides and isolates (which can make a name read backwards,
  /// "Trojan Source") and the Unicode line and paragraph separators.
  static func isLayoutControl(_ scalar: Unicode.Scalar) -> Bool {
    (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
      || scalar.value == 0x2028 || scalar.value == 0x2029
  }

  /// Whether `scalar` must not reach a human-readable output as it is.
  static func needsVisibleForm(_ scalar: Unicode.Scalar) -> Bool {
    isControl(scalar) || isLayoutControl(scalar)
  }

  /// Appends the one visible form of a character that ``needsVisibleForm(_:)``: `\n`, `\r`
  /// and `\t` as Swift writes them, anything else as `\u{1B}`.
  static func visible(_ scalar: Unicode.Scalar, into out: inout String) {
    switch scalar {
    case "\n": out += "\\n"
    case "\r": out += "\\r"
    case "\t": out += "\\t"
    default: out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
    }
  }
}
