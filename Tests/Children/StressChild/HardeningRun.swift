import DeallocQueue
import DeallocTrace
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The `hardening` modes: host programs for the recorder-hardening tests (issue 12).
///
///   StressChild hardening rounds N EXIT_STATUS   tracing from DEALLOCTRACE_LOG: up to N
///       rounds of enqueues, each flushed to the log, fewer when tracing stops; prints the
///       signal state before and after, then exits with EXIT_STATUS
///   StressChild hardening cycles PATH THREADS ROUNDS   start/finish cycles on threads
///   StressChild hardening bound   a queue with `maxPending` (tracing from the environment)
///   StressChild hardening stacks  enqueues from the main thread, a dispatch worker and a task
enum HardeningRun {
  static func run(_ arguments: [String]) -> Never {
    switch (arguments.first, arguments.count) {
    case ("rounds", 3):
      guard let rounds = Int(arguments[1]), let status = Int32(arguments[2]) else { break }
      exit(runRounds(rounds, exitStatus: status))
    case ("cycles", 4):
      guard let threads = Int(arguments[2]), let rounds = Int(arguments[3]) else { break }
      exit(runCycles(path: arguments[1], threads: threads, rounds: rounds))
    case ("bound", 1):
      exit(runBound())
    case ("stacks", 1):
      exit(runStacks())
    default:
      break
    }
    ChildOutput.error(
      "usage: StressChild hardening rounds N EXIT_STATUS | cycles PATH THREADS ROUNDS | bound"
        + " | stacks")
    exit(64)
  }

  static let objectsPerRound = 200

  /// An ordinary traced host: it records until told to stop or until the tracer stops (a
  /// file size limit, a FIFO whose reader left), then uses the queue untraced once more.
  /// The signal lines show that the host's dispositions and mask are as they were.
  private static func runRounds(_ rounds: Int, exitStatus: Int32) -> Int32 {
    ChildOutput.line("signals before: \(signalState())")
    let queue = DeallocQueue(label: "rounds", delay: .milliseconds(20))
    let tracingAtStart = DeallocTrace.isEnabled
    let total = (rounds + 1) * objectsPerRound
    let ledger = DeinitLedger(capacity: total)
    var done = 0
    while done < rounds {
      for slot in 0..<objectsPerRound {
        var object: TrackedObject? = TrackedObject(
          index: done * objectsPerRound + slot, ledger: ledger)
        queue.releaseInBackground(&object)
      }
      DeallocTrace.mark("round \(done)")
      queue.drain()
      DeallocTrace.flush()
      done += 1
      if !DeallocTrace.isEnabled { break }
    }
    // One more round, whatever the tracer did: the queue keeps working.
    for slot in 0..<objectsPerRound {
      var object: TrackedObject? = TrackedObject(
        index: done * objectsPerRound + slot, ledger: ledger)
      queue.releaseInBackground(&object)
    }
    let expected = (done + 1) * objectsPerRound
    let settled = ledger.waitFor(expected, seconds: 30) { queue.drain() }
    ChildOutput.line(
      "rounds=\(done) deinits=\(ledger.deinitCount)/\(expected) settled=\(settled)"
        + " tracing=\(tracingAtStart ? "on" : "off")->\(DeallocTrace.isEnabled ? "on" : "off")")
    ChildOutput.line("signals after: \(signalState())")
    return exitStatus
  }

  /// SIGPIPE's and SIGXFSZ's dispositions and whether the calling thread blocks them.
  private static func signalState() -> String {
    [("SIGPIPE", SIGPIPE), ("SIGXFSZ", SIGXFSZ)].map { name, number in
      var action = sigaction()
      sigaction(number, nil, &action)
      let handler = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
      let disposition =
        handler == unsafeBitCast(SIG_DFL, to: Int.self)
        ? "default" : handler == unsafeBitCast(SIG_IGN, to: Int.self) ? "ignored" : "handled"
      var mask = sigset_t()
      pthread_sigmask(SIG_BLOCK, nil, &mask)
      let blocked = sigismember(&mask, number) == 1 ? "blocked" : "unblocked"
      return "\(name)=\(disposition),\(blocked)"
    }.joined(separator: " ")
  }

  /// `THREADS` threads each run `ROUNDS` start/enqueue/finish cycles on one path. Only one
  /// session can record at a time, so a `start` that finds another thread's session running
  /// is refused (`alreadyRecording`, counted); any other refusal is printed.
  private static func runCycles(path: String, threads: Int, rounds: Int) -> Int32 {
    let sessions = Atomic<Int>(0)
    let busy = Atomic<Int>(0)
    let failures = Mutex<[String]>([])
    let queue = DeallocQueue(label: "cycles", delay: .milliseconds(5))
    let group = DispatchGroup()
    for _ in 0..<threads {
      group.enter()
      let thread = Thread {
        for round in 0..<rounds {
          do {
            try DeallocTrace.start(path: path, frames: 4)
            sessions.add(1, ordering: .relaxed)
          } catch DeallocTraceError.alreadyRecording {
            busy.add(1, ordering: .relaxed)
          } catch {
            failures.withLock { $0.append("\(error)") }
          }
          for _ in 0..<20 {
            var object: TrackedObject? = TrackedObject(index: 0, ledger: unusedLedger)
            queue.releaseInBackground(&object)
          }
          DeallocTrace.mark("round \(round)")
          queue.drain()
          DeallocTrace.finish()
        }
        group.leave()
      }
      thread.start()
    }
    group.wait()
    let seen = failures.withLock { $0 }
    ChildOutput.line(
      "cycles sessions=\(sessions.load(ordering: .relaxed)) busy=\(busy.load(ordering: .relaxed))"
        + " failures=\(seen.count)")
    for failure in seen { ChildOutput.line("failure: \(failure)") }
    return seen.isEmpty ? 0 : 1
  }

  /// A ledger for objects whose deinits nobody counts (every slot is 0).
  private static let unusedLedger = DeinitLedger(capacity: 1)

  /// Hands `pendingBound * 5 / 2` objects to a queue bounded at `pendingBound` whose timer
  /// would wait a minute: the bound drains them, the rest goes with an explicit drain.
  private static func runBound() -> Int32 {
    let pendingBound = 4
    let count = pendingBound * 5 / 2
    let ledger = DeinitLedger(capacity: count)
    let queue = DeallocQueue(
      label: "bounded", delay: .seconds(60), target: DispatchQueue(label: "bounded-target"),
      maxPending: pendingBound)
    for index in 0..<count {
      var object: TrackedObject? = TrackedObject(index: index, ledger: ledger)
      queue.releaseInBackground(&object)
    }
    let boundDrained = ledger.waitFor(count / pendingBound * pendingBound, seconds: 30) {}
    queue.drain()
    let settled = ledger.waitFor(count, seconds: 30) { queue.drain() }
    ChildOutput.line(
      "bound drains=\(queue.boundDrainCountForTesting) bound-drained=\(boundDrained)"
        + " deinits=\(ledger.deinitCount)/\(count) settled=\(settled)")
    return settled ? 0 : 1
  }

  /// Enqueues from the main thread, a dispatch worker and a Swift task, so that the
  /// enqueue stacks run through libc's start code, libdispatch and the concurrency
  /// runtime's C++ job functions; the test reads the names the recorder gave them.
  private static func runStacks() -> Int32 {
    let queue = DeallocQueue(label: "stacks", delay: .seconds(60))
    var fromMain: TrackedObject? = TrackedObject(index: 0, ledger: unusedLedger)
    queue.releaseInBackground(&fromMain)
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      var fromWorker: TrackedObject? = TrackedObject(index: 0, ledger: unusedLedger)
      queue.releaseInBackground(&fromWorker)
      done.signal()
    }
    done.wait()
    Task.detached {
      var fromTask: TrackedObject? = TrackedObject(index: 0, ledger: unusedLedger)
      queue.releaseInBackground(&fromTask)
      done.signal()
    }
    done.wait()
    queue.drain()
    ChildOutput.line("stacks traced=\(DeallocTrace.isEnabled)")
    return 0
  }
}
