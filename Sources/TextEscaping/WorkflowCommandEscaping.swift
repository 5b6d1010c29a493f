extension Escaping {
  /// `text` as the data (message) of a GitHub Actions workflow command (`::error ...::DATA`):
  /// `%`, `\r` and `\n` as `%25`, `%0D` and `%0A`, the runner's own escapes, so that no text
  /// can end the command or start another one on a new line; a tab is kept (it ends
  /// nothing); other control and layout characters in their visible form (`\u{1B}`), as on
  /// a terminal, because the runner's log is shown as one.
  public static func workflowData(_ text: String) -> String {
    workflow(text, inProperty: false)
  }

  /// `text` as a property value of a workflow command (`file=`, `title=`): as
  /// ``workflowData(_:)``, and `:` and `,` as `%3A` and `%2C`, which would otherwise end
  /// the value.
  public static func workflowProperty(_ text: String) -> String {
    workflow(text, inProperty: true)
  }

  private static func workflow(_ text: String, inProperty: Bool) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "%": out += "%25"
      case "\r": out += "%0D"
      case "\n": out += "%0A"
      case ":" where inProperty: out += "%3A"
      case "," where inProperty: out += "%2C"
      case "\t": out.unicodeScalars.append(scalar)
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
