extension DeallocTrace {
  /// Runs a whole-process leak census now, labelled `label`: every live Swift object the
  /// program can no longer reach, grouped as `ROOT CYCLE` and `ROOT LEAK` trees, with the
  /// objects still waiting in a `DeallocQueue` counted as delayed.
  ///
  /// While a session records, the census goes into its log as a `census` record
  /// (`docs/log-format.md`); otherwise its `leaks`-style text goes to stderr. It needs the
  /// live-object registry from the process's start: set `DEALLOCTRACE_LEAKS=1` (or
  /// `DEALLOCTRACE_HOLDERS=1`); without it the census says in one line why it cannot run.
  ///
  /// The trade-off: the census parks every other thread while it reads memory (a few
  /// milliseconds per 100,000 objects, docs/benchmarks.md), and a system call the kernel
  /// does not restart (`nanosleep`, `poll`) returns `EINTR` in a thread it interrupted.
  /// Call it at a quiet moment, such as after each iteration of a scenario.
  public static func checkpoint(_ label: String) {
    Census.runAndReport(label: label, in: Tracer.session())
  }
}

extension DeallocTrace {
  /// Runs a census now and returns its `census` record's members (JSON without `ev` and
  /// `t`), for leak assertions that judge it in the process; nil when out of memory. Written
  /// nowhere.
  package static func censusMembers(label: String) -> String? {
    Census.run(label: label)?.members
  }
}
