/// Turns a ``Report`` into one output document.
///
/// Implementation requirements: a renderer is a pure function of the report (no clock, no
/// environment), so that golden files are stable; it escapes everything that comes from the
/// log for its format; and it caps long lists while saying how much it left out.
public protocol ReportRenderer: Sendable {
  /// The whole document, ending with a newline.
  func render(_ report: Report) -> String

  /// ``render(_:)``'s document as UTF-8 bytes, lent to `body` for writing out. A renderer
  /// that produces bytes (the JSON one) implements it to skip the `String` and its UTF-8
  /// check, and to lend its buffer where it lies; the default lends the text's bytes.
  func withBytes<Result>(of report: Report, _ body: (UnsafeBufferPointer<UInt8>) -> Result)
    -> Result
}

extension ReportRenderer {
  public func withBytes<Result>(
    of report: Report, _ body: (UnsafeBufferPointer<UInt8>) -> Result
  ) -> Result {
    var text = render(report)
    return text.withUTF8(body)
  }
}
