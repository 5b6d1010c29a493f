import DeallocAnalysis
import DeallocTrace
import Testing

/// Attaches the HTML report of this process's trace log to a failing test, as
/// `dealloctrace-report.html`: the holder trees, the census and the timeline of the run so
/// far, one click from the failure in a runner that keeps attachments.
///
/// Why the whole log: the report's facts about a leak (its release, its checks, its
/// holders) come from records of the whole run, not of the test alone. The cost, a flush
/// and one analysis of the log, is paid once per failing test, never by a passing one; with
/// tracing off there is no log and nothing is attached.
enum SessionReportAttachment {
  static let name = "dealloctrace-report.html"

  static func record(at location: SourceLocation) {
    guard let html = html() else { return }
    Attachment.record(html, named: name, sourceLocation: location)
  }

  /// The report of the log as it is now; `nil` without tracing, or when the log cannot be
  /// read (a failure's evidence is best effort: it never fails the test a second time).
  static func html() -> String? {
    guard let log = DeallocTrace.logPath else { return nil }
    DeallocTrace.flush()
    guard let report = try? DeallocAnalysis.analyze([log]) else { return nil }
    return HTMLRenderer().render(report)
  }
}
