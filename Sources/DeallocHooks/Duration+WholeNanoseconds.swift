extension Duration {
  /// The duration in whole nanoseconds, 0 when negative and `Int.max` when too large: what
  /// Dispatch deadlines and the `session` record's `delay_ms` need. Shared by the queue
  /// (its timers and waits) and the recorder, so that both read a delay the same way.
  package var wholeNanoseconds: Int {
    let (seconds, attoseconds) = components
    let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return seconds < 0 ? 0 : Int(Int64.max) }
    let (total, carry) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
    guard !carry else { return Int(Int64.max) }
    return Int(max(0, total))
  }
}
