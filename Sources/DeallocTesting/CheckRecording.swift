import DeallocTrace

/// The seam between leak assertions and the recorder: one `check` record per observation.
///
/// Kept in one file so that the assertions depend on the recorder's API in one place, and
/// so that recording stays best-effort: a check that cannot be recorded never fails a test.
enum CheckRecording {
  /// Whether `check` records are being written now (starts tracing from the environment,
  /// `DEALLOCTRACE_LOG`, if nothing did yet).
  static var isRecording: Bool { DeallocTrace.isEnabled }

  /// Writes a `check` record: a leak assertion looked at the object at `address` and saw
  /// it `alive` (or gone); `id` is the tracer's id for it when a queue told us.
  static func record(address: UInt, type: String, alive: Bool, label: String, id: UInt64?) {
    DeallocTrace.recordCheck(address: address, typeName: type, alive: alive, label: label, id: id)
  }

  /// The tracer's id for `object` if a queue released it earlier and it survived that
  /// release; `nil` when tracing is off or it did not.
  static func survivorID(of object: AnyObject) -> UInt64? {
    DeallocTrace.survivorID(of: object)
  }

  /// Where the trace log goes, for failure messages that send the reader to it.
  static var logDestination: String? { DeallocTrace.logPath }
}
