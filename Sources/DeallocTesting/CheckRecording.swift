/// The seam between leak assertions and the recorder: one `check` record per observation.
///
/// Kept in one file so that the assertions never depend on how the recorder spells its
/// API, and so that recording stays best-effort: a check that cannot be recorded never
/// fails a test.
enum CheckRecording {
  /// Whether `check` records are being written now.
  static var isRecording: Bool { false }

  /// Writes a `check` record: a leak assertion looked at the object at `address` and saw
  /// it `alive` (or gone); `id` is the tracer's id for it when a queue told us.
  static func record(
    address: String,
    type: String,
    alive: Bool,
    label: String,
    id: UInt64?
  ) {}

  /// The symbolized frames of the stack that enqueued object `id`, innermost first, when
  /// the recorder can give them; `nil` when it cannot (tracing off, backtraces off).
  static func enqueueStack(id: UInt64) -> [String]? { nil }

  /// Where the trace log goes, for failure messages that send the reader to it.
  static var logDestination: String? { nil }
}
