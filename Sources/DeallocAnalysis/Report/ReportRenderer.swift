/// Turns a ``Report`` into one output document.
///
/// Implementation requirements: a renderer is a pure function of the report (no clock, no
/// environment), so that golden files are stable; it escapes everything that comes from the
/// log for its format; and it caps long lists while saying how much it left out.
public protocol ReportRenderer: Sendable {
  /// The whole document, ending with a newline.
  func render(_ report: Report) -> String

  /// ``render(_:)``'s document as UTF-8 bytes, for writing out. A renderer that produces
  /// bytes (the JSON one) implements it to skip the `String` and its UTF-8 check; the
  /// default takes the text's bytes.
  func renderBytes(_ report: Report) -> [UInt8]
}

extension ReportRenderer {
  public func renderBytes(_ report: Report) -> [UInt8] { Array(render(report).utf8) }
}
