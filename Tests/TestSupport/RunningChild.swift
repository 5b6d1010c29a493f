import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A started `ChildProcess`: its output is read while it runs, and it is reaped by a thread
/// of its own, so that a test can wait for a line, signal it, or wait for its end.
public final class RunningChild: @unchecked Sendable {
  // @unchecked: `waitStatus` is guarded by `condition`.
  public let pid: pid_t
  /// The child's standard output (and standard error, when merged), as read so far.
  public let output: PipeDrain
  /// The child's standard error, when it has a pipe or a terminal of its own.
  public let error: PipeDrain?
  private let executable: String
  private let condition = NSCondition()
  private var waitStatus: Int32?

  init(pid: pid_t, executable: String, output: PipeDrain, error: PipeDrain?) {
    self.pid = pid
    self.executable = executable
    self.output = output
    self.error = error
    let thread = Thread { [self] in reap() }
    thread.start()
  }

  /// Waits for the child's exit without reaping it, then reaps it under the lock that
  /// `signal(_:)` takes: a signal never reaches a reused pid.
  private func reap() {
    var info = siginfo_t()
    while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
    condition.lock()
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    waitStatus = status
    condition.broadcast()
    condition.unlock()
  }

  /// Whether the child has exited (and was reaped).
  public var hasExited: Bool {
    condition.lock()
    defer { condition.unlock() }
    return waitStatus != nil
  }

  /// Sends `number` to the child, unless it has already exited.
  public func signal(_ number: Int32 = SIGKILL) {
    condition.lock()
    defer { condition.unlock() }
    if waitStatus == nil { kill(pid, number) }
  }

  /// Kills the child (when it still runs) and waits for its end.
  @discardableResult
  public func stop() -> ChildRun {
    signal(SIGKILL)
    return wait()
  }

  /// How long a child may run when its test names no bound: longer than any child of these
  /// tests runs on a loaded machine, so that a hang fails its test instead of the whole run.
  public static let defaultTimeout: Duration = .seconds(600)

  /// Waits until standard output has the line `line`; false when the child closed it first
  /// or `timeout` passed.
  public func waitForLine(_ line: String, timeout: Duration = .seconds(120)) -> Bool {
    output.wait(
      until: { String(decoding: $0, as: UTF8.self).contains(line + "\n") },
      deadline: Self.deadline(after: timeout))
  }

  private static func deadline(after timeout: Duration) -> Date {
    let (seconds, attoseconds) = timeout.components
    return Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
  }

  /// Waits for the child's end and for its pipes to close, and returns what it did. A child
  /// still running after `timeout` is killed with SIGKILL; pipes still open `testWaitBound`
  /// after its end are given up. Either way the run says `timedOut`, and a line of its
  /// standard error (or output, when merged) says what happened.
  ///
  /// `outputBound` replaces `testWaitBound` as the wait for the pipes (for the runner's tests).
  public func wait(
    timeout: Duration = RunningChild.defaultTimeout, outputBound: Duration? = nil
  ) -> ChildRun {
    var timedOut = false
    condition.lock()
    let deadline = Self.deadline(after: timeout)
    while waitStatus == nil {
      if !condition.wait(until: deadline) && waitStatus == nil {
        timedOut = true
        kill(pid, SIGKILL)
        break
      }
    }
    // Killed: its end comes at once (or the kernel is broken); bounded all the same.
    while waitStatus == nil {
      if !condition.wait(until: testWaitDeadline) && waitStatus == nil { break }
    }
    let status = waitStatus ?? (128 + SIGKILL) << 8
    condition.unlock()
    let signal = status & 0x7f
    let pipesDeadline = outputBound.map { Self.deadline(after: $0) } ?? testWaitDeadline
    let standardOutput = output.wait(deadline: pipesDeadline)
    let standardError = error?.wait(deadline: pipesDeadline)
    let pipesEnded = standardOutput.ended && standardError?.ended != false
    var run = ChildRun(
      pid: pid, exitStatus: signal == 0 ? (status >> 8) & 0xff : nil,
      signal: signal == 0 ? nil : signal, timedOut: timedOut || !pipesEnded,
      standardOutput: String(decoding: standardOutput.data, as: UTF8.self),
      standardError: standardError.map { String(decoding: $0.data, as: UTF8.self) } ?? "")
    if run.timedOut {
      // Said in the output every test prints with its failed asserts, so that a hang reads as
      // one whichever runner asked.
      let note =
        "\n[test harness] \(executable) "
        + (timedOut
          ? "was killed after \(timeout): it did not finish"
          : "ended, but its output stayed open past the bound (a descendant holds it)")
        + "\n"
      if error == nil { run.standardOutput += note } else { run.standardError += note }
    }
    return run
  }
}

/// What a child did: how it ended, and what it wrote.
public struct ChildRun: Sendable {
  public var pid: pid_t
  /// The exit status, or nil when a signal ended the child.
  public var exitStatus: Int32?
  /// The signal that ended the child, or nil when it exited.
  public var signal: Int32?
  /// Whether the child ran past its timeout and was killed for it.
  public var timedOut: Bool
  public var standardOutput: String
  /// Empty unless standard error had a pipe or a terminal of its own (`ErrorStream.separate`,
  /// `.terminal`).
  public var standardError: String

  /// The status as a shell reports it: the exit status, or 128 + the signal's number.
  public var status: Int32 { exitStatus ?? 128 + (signal ?? 0) }

  /// The non-empty lines of standard error.
  public var errorLines: [String] {
    standardError.split(separator: "\n").map(String.init)
  }
}
