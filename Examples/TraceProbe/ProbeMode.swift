/// What the probe does, chosen by its first argument.
enum ProbeMode: String {
  /// Every record kind once: enqueues from a nested stack and from a named thread, a
  /// deinit that enqueues and marks, a survivor let go later, a check, timer and explicit
  /// drains. Exits normally, so `end` comes from the exit handler.
  case scenario
  /// The scenario between `DeallocTrace.start(path:)` and `finish()`.
  case explicit
  /// Enqueues and drains until killed; prints `ready` once the log has records.
  case forever
  /// Forks; the child uses the queue and exits, the parent then runs the scenario.
  case fork
  /// A survivor let go with no drain, mark or check afterwards: only the tracer's timer can
  /// notice its death.
  case timerSurvivor = "timer-survivor"
  /// Deletes its own log while recording, then keeps using the queue.
  case deleteLog = "delete-log"
}
