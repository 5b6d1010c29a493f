/// One record as the calling thread hands it to the writer: fixed fields, no formatting.
///
/// The hot path fills this in and copies it into the `EventBuffer`; everything that costs
/// (type names, stacks, symbols, JSON) happens on the writer thread. Fields are reused
/// across kinds (`count` is the depth of an enqueue, the batch size of a drain, the retain
/// count of a release) to keep the record small.
struct TraceEvent: @unchecked Sendable {
  enum Kind: UInt8 {
    case thread, enqueue, drain, release, dealloc, mark, check, holders
  }

  var kind: Kind
  /// Nanoseconds since the session started (monotonic).
  var time: UInt64 = 0
  var threadID: Int64 = 0
  /// The object's id; 0 when absent (a `check` on an object the tracer doesn't know).
  var objectID: UInt64 = 0
  /// The object's address, hidden (`HiddenAddress`): a buffered record must not read as a
  /// holder to a reference scan.
  var hiddenAddress: UInt = 0
  /// The object's metatype, resolved to a name on the writer thread. Nil for a `check`
  /// given a type name instead: then `text` is the name, a NUL, and the label (a rare
  /// record pays for the split so that the hot records stay small).
  var metatype: UnsafeRawPointer? = nil
  /// Enqueue: depth. Drain: batch size. Release: retain count left (when not freed).
  /// Holders: why the scan ran (`HolderScanReason`).
  var count: Int = 0
  /// Enqueue: the retain count before the queue took the object. Drain: why
  /// (`QueueTracing.DrainReason.traceCode`).
  var retainCount: Int = 0
  /// Release: freed. Check: alive. Drain: true when the timer fired.
  var flag: Bool = false
  /// Queue label, mark or check label, or thread name. Holders: the scanner's JSON value
  /// (after the type name and a NUL when there is no metatype, as for a check).
  var text: String = ""
  /// Where this event's frames start in the buffer's frame array, and how many.
  var frameStart: Int = 0
  var frameCount: Int = 0

  init(kind: Kind) {
    self.kind = kind
  }
}
