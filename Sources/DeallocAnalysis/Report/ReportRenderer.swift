/// Turns a ``Report`` into one output document.
///
/// Implementation requirements: a renderer is a pure function of the report (no clock, no
/// environment), so that golden files are stable; it escapes everything that comes from the
/// log for its format; and it caps long lists while saying how much it left out.
public protocol ReportRenderer: Sendable {
  /// The whole document, ending with a newline.
  func render(_ report: Report) -> String
}
