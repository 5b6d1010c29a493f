import DeallocLog
import TextEscaping

/// An HTML document under construction, with the escaping every piece of log text needs.
///
/// Why a buffer and not string interpolation: everything that comes from a log (type names
/// such as `Array<Node>`, check labels, symbols, file names) goes through ``text(_:)`` or an
/// attribute value, so forgetting to escape takes deliberate effort. The markup it produces is
/// also well-formed XML (void elements self-closed, only the five XML entities), so a test can
/// parse the whole report with an XML parser. The trade-off is a little ceremony per element.
package struct HTMLBuffer {
  private(set) var output = ""

  /// Appends markup written by the renderer itself (never log text).
  mutating func raw(_ markup: String) {
    output += markup
  }

  /// Appends escaped text.
  mutating func text(_ text: String) {
    Escaping.html(text, into: &output)
  }

  /// Opens `tag` with escaped attribute values; `nil` values are left out.
  mutating func open(_ tag: String, _ attributes: [(String, String?)] = []) {
    output += "<" + tag
    appendAttributes(attributes)
    output += ">"
  }

  /// Closes `tag`.
  mutating func close(_ tag: String) {
    output += "</" + tag + ">"
  }

  /// Appends a self-closed element (`<rect … />`, `<br />`).
  mutating func void(_ tag: String, _ attributes: [(String, String?)] = []) {
    output += "<" + tag
    appendAttributes(attributes)
    output += "/>"
  }

  /// Appends `<tag …>escaped text</tag>`.
  mutating func element(_ tag: String, _ attributes: [(String, String?)] = [], text: String) {
    open(tag, attributes)
    self.text(text)
    close(tag)
  }

  /// Appends `<tag …>`, the content written by `body`, then `</tag>`.
  mutating func element(
    _ tag: String, _ attributes: [(String, String?)] = [], _ body: (inout HTMLBuffer) -> Void
  ) {
    open(tag, attributes)
    body(&self)
    close(tag)
  }

  private mutating func appendAttributes(_ attributes: [(String, String?)]) {
    for (name, value) in attributes {
      guard let value else { continue }
      output += " " + name + "=\""
      Escaping.html(value, into: &output)
      output += "\""
    }
  }
}

extension HTMLBuffer {
  /// One labelled tick under a chart's horizontal axis: a short line down from `baseline`
  /// at `x`, and `label` centred below it. Shared by the timeline and the histogram.
  mutating func xAxisTick(at x: Double, baseline: Double, label: String) {
    let px = SVGNumber.format(x)
    void(
      "line",
      [
        ("class", "axis"), ("x1", px), ("x2", px), ("y1", SVGNumber.format(baseline)),
        ("y2", SVGNumber.format(baseline + 4)),
      ])
    element(
      "text", [("x", px), ("y", SVGNumber.format(baseline + 16)), ("text-anchor", "middle")],
      text: label)
  }
}
