import CTraceRuntime

/// The writer's clock and its wait for events: the real ones, or a test's, which checks the
/// flush bound in simulated time instead of timing a run on a loaded machine.
struct WriterClock: Sendable {
  /// Monotonic nanoseconds.
  var now: @Sendable () -> UInt64
  /// Waits at most the given nanoseconds for events, then takes them (`EventBuffer.take`).
  var take: @Sendable (EventBuffer, inout [TraceEvent], inout [UInt], UInt64) -> EventBuffer.State

  static let real = WriterClock(
    now: { ctrace_monotonic_ns() },
    take: { buffer, batch, frames, nanoseconds in
      buffer.take(into: &batch, frames: &frames, waitingAtMost: nanoseconds)
    })
}
