extension Escaping {
  /// `text` for Markdown prose and table cells (GitHub-flavoured: PR comments, job
  /// summaries).
  ///
  /// Markdown's own characters are backslash-escaped and `&`, `<`, `>` written as entities,
  /// so `Array<Node>` or a label with `|` cannot break a table or open an HTML tag. Line
  /// breaks and tabs become spaces (a cell is one line); other control and layout characters
  /// take their visible form (`\u{1B}`, with its backslash escaped). Every `@` is followed by
  /// a zero-width space (`&#8203;`), so `@team` in a type name or label pings nobody when
  /// the report is posted as a comment; the trade-off is that a copied `@name` carries the
  /// invisible character.
  public static func markdown(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "|": out += "\\|"
      case "@": out += "@&#8203;"
      case "\\", "`", "*", "_", "[", "]", "#": out += "\\" + String(scalar)
      case "\n", "\r", "\t": out += " "
      default:
        if needsVisibleForm(scalar) {
          out += "\\"
          visible(scalar, into: &out)
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out
  }

  /// `text` for inside a Markdown code span: backticks and pipes cannot be escaped there, so
  /// they become look-alikes (`ˋ`, `¦`). GitHub links no mentions inside code.
  public static func markdownCode(_ text: String) -> String {
    markdownFenceLine(text).replacing("|", with: "¦")
  }

  /// One line of text for inside a code fence: backticks become a look-alike (three could
  /// close the fence), line breaks of every kind and tabs become spaces, and other control
  /// and layout characters take their visible form.
  public static func markdownFenceLine(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "`": out += "ˋ"
      case "\n", "\r", "\t", "\u{2028}", "\u{2029}", "\u{85}": out += " "
      default:
        if needsVisibleForm(scalar) {
          visible(scalar, into: &out)
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out
  }
}
