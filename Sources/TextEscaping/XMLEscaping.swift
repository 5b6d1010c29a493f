extension Escaping {
  /// `text` as XML 1.0 character data (JUnit): `&`, `<`, `>` as references, line breaks and
  /// tabs kept, `\r` as `&#13;` (a parser would fold it into `\n`), and every character XML
  /// forbids or that reorders text in their visible form (`\u{1B}`). A `:` that starts a
  /// line (see ``LineStart``) is `&#58;`, so that no line of it is a workflow command.
  public static func xmlText(_ text: String) -> String {
    xml(text, inAttribute: false)
  }

  /// `text` as an XML attribute value between double quotes: as ``xmlText(_:)``, and `"`,
  /// `\n` and `\t` as references, which attribute-value normalization would otherwise
  /// turn into spaces.
  public static func xmlAttribute(_ text: String) -> String {
    xml(text, inAttribute: true)
  }

  private static func xml(_ value: String, inAttribute: Bool) -> String {
    var out = ""
    out.reserveCapacity(value.utf8.count)
    var lineStart = LineStart()
    for scalar in value.unicodeScalars {
      if lineStart.isCommand(scalar) {
        out += "&#58;"
        continue
      }
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"" where inAttribute: out += "&quot;"
      case "\n" where inAttribute: out += "&#10;"
      case "\r": out += "&#13;"
      case "\t" where inAttribute: out += "&#9;"
      case "\n", "\t": out.unicodeScalars.append(scalar)
      default:
        if needsVisibleForm(scalar) || !isXMLCharacter(scalar) {
          visible(scalar, into: &out)
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out
  }

  /// XML 1.0's `Char` production, without the controls handled above: U+0020–U+D7FF,
  /// U+E000–U+FFFD and U+10000 and above (Swift strings hold no surrogates).
  private static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...: return true
    default: return false
    }
  }
}
