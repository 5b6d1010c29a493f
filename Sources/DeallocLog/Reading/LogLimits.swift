/// The ranges the reader accepts for the log's integers; a record with a value outside them is
/// a malformed line (a warning, and the line is skipped).
///
/// Why bound them at the reader: every consumer subtracts times (latencies, ages, "enqueued
/// 4 ms earlier") and adds one to depths, and Swift traps on overflow. With times in
/// `0...maximumTime` the sum or difference of any two (even of a few) cannot overflow, and with
/// counts in `0...maximumCount` neither can a count plus one, so no consumer needs checked
/// arithmetic. The trade-off: a value the contract allows in principle but no recorder can
/// write (a session longer than 36 years, a queue of 2⁴⁸ objects) is refused.
public enum LogLimits {
  /// The largest `t`: 2⁶⁰ ns, about 36.5 years after the session's start. `t` is integer
  /// nanoseconds since the session's start, so a negative `t` is malformed too.
  public static let maximumTime: Int64 = 1 << 60
  /// The largest `depth`, `n`, `rc`, `pending` and `lost`: 2⁴⁸, more objects than a 64-bit
  /// address space holds. Like times, these are never negative.
  public static let maximumCount: Int64 = 1 << 48

  /// The range of times.
  public static var times: ClosedRange<Int64> { 0...maximumTime }
  /// The range of counts.
  public static var counts: ClosedRange<Int64> { 0...maximumCount }
}
