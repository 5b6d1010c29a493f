extension DeallocTrace {
  /// The tracer's id for `object` when a queue released it earlier and it survived that
  /// release (its `release` record says `freed: false`); `nil` when tracing is off or the
  /// object is no survivor of this session.
  ///
  /// Why: once a queue let an object go, the queue no longer knows it, but the tracer
  /// watches every survivor until it dies. A leak assertion that finds an object alive and
  /// in no queue asks here whether a queue's own timer released it before the check, and
  /// with the id reads the enqueue back from the log. The trade-off: the lookup first looks
  /// at every survivor (as a drain does), so it is for the end of a test, not hot paths.
  package static func survivorID(of object: AnyObject) -> UInt64? {
    guard let session = Tracer.session() else { return nil }
    // Held by the caller, so alive: no dead survivor can share its address, and the ones
    // that died before are dropped by the look `survivorID(at:in:)` takes first.
    return Tracer.survivorID(
      at: HiddenAddress.hide(UInt(bitPattern: ObjectIdentifier(object))), in: session)
  }
}
