extension Escaping {
  /// Appends `text` for HTML, safe both as element text and as an attribute value between
  /// double quotes: `&`, `<`, `>`, `"` and `'` as references; line breaks and tabs kept
  /// (the page lays them out); other control and layout characters in their visible form
  /// (`\u{1B}`), which XML (the SVG parts) would otherwise refuse and a browser would use
  /// to reorder a name. U+FFFE and U+FFFF, not characters at all, become U+FFFD. A `:` that
  /// starts a line (see ``LineStart``) is `&#58;`, so that no line of a page written to a CI
  /// log is a workflow command.
  public static func html(_ text: String, into out: inout String) {
    var lineStart = LineStart()
    for scalar in text.unicodeScalars {
      if lineStart.isCommand(scalar) {
        out += "&#58;"
        continue
      }
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
      case "\u{FFFE}", "\u{FFFF}": out += "\u{FFFD}"
      default:
        if needsVisibleForm(scalar) {
          visible(scalar, into: &out)
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
  }

  /// `text`, escaped for HTML.
  public static func html(_ text: String) -> String {
    var out = ""
    html(text, into: &out)
    return out
  }
}
