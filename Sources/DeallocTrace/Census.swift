import CHolders
import CTraceRuntime
import DeallocHooks
import Glibc

/// The recorder's side of the whole-process leak census (issue 27): asking the queues what
/// they hold, running `CHolders`' census, and handing its answer to the log or to stderr.
///
/// The census itself (CHoldersCensus.h) parks the other threads, reads memory and groups
/// what the program can no longer reach; here it learns which objects wait in a queue, so
/// that those are *delayed* rather than leaked. Their addresses travel hidden (XOR-ed with
/// `CHOLDERS_CENSUS_HIDE`) in tool memory, which the census never reads as a root.
enum Census {
  /// How long a census waits for each queue's drain under way before it looks.
  static let drainWait: Duration = .milliseconds(250)

  /// What one census said: the `census` record's members (JSON, without the braces) and the
  /// `leaks`-style text.
  struct Result {
    var members: String
    var text: String
  }

  /// Whether `DEALLOCTRACE_LEAKS` asked for a census at exit.
  static var requestedAtExit: Bool {
    cholders_census_requested() != 0
  }

  /// Runs one census now, labelled `label`. Nil only when out of memory.
  static func run(label: String) -> Result? {
    let queues = QueueTracing.pendingForCensus(
      hiddenWith: UInt(CHOLDERS_CENSUS_HIDE), drainWait: drainWait)
    let count = queues.reduce(0) { $0 + $1.hidden.count }
    let hiddenBytes = max(1, count) * MemoryLayout<UInt>.stride
    let queueBytes = max(1, count) * MemoryLayout<UInt32>.stride
    guard let hiddenMemory = cholders_tool_memory(hiddenBytes) else { return nil }
    defer { cholders_tool_memory_free(hiddenMemory, hiddenBytes) }
    guard let queueMemory = cholders_tool_memory(queueBytes) else { return nil }
    defer { cholders_tool_memory_free(queueMemory, queueBytes) }
    let hidden = hiddenMemory.bindMemory(to: UInt.self, capacity: max(1, count))
    let queueIndexes = queueMemory.bindMemory(to: UInt32.self, capacity: max(1, count))
    var next = 0
    for (index, queue) in queues.enumerated() {
      for address in queue.hidden {
        hidden[next] = address
        queueIndexes[next] = UInt32(index)
        next += 1
      }
    }
    let labels = queues.map { strdup($0.label) }
    defer {
      for label in labels { free(label) }
    }
    return labels.map { UnsafePointer($0) }.withUnsafeBufferPointer { labelBuffer in
      var pending = cholders_census_pending(
        hidden: hidden, queue: queueIndexes, count: count, labels: labelBuffer.baseAddress,
        label_count: labelBuffer.count)
      var text: UnsafeMutablePointer<CChar>?
      guard let json = cholders_census_json(&pending, label, &text) else {
        cholders_free(text)
        return nil
      }
      defer {
        cholders_free(json)
        cholders_free(text)
      }
      return Result(members: String(cString: json), text: text.map { String(cString: $0) } ?? "")
    }
  }

  /// Runs a census and records it in `session`, or prints it on stderr when there is none.
  static func runAndReport(label: String, in session: TraceSession?) {
    guard let result = run(label: label) else {
      StandardError.write("dealloctrace: the leak census could not run: out of memory")
      return
    }
    if let session {
      session.announceCurrentThread()
      session.buffer.push(
        TraceEvent(
          time: session.now(), threadID: ctrace_thread_id(), .census(members: result.members)))
    } else {
      writeText(result.text)
    }
  }

  /// The exit census of a session that `DEALLOCTRACE_LEAKS` asked for: recorded before the
  /// session ends, and the load-time exit handler told that it need not print one.
  static func recordAtExit(_ session: TraceSession) {
    guard requestedAtExit else { return }
    runAndReport(label: "exit", in: session)
    cholders_census_exit_done()
  }

  /// The text as it is: already escaped by the census, ended by its own line break.
  static func writeText(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { ctrace_write_log(2, $0.baseAddress, $0.count) }
  }
}

/// Called by CHolders' exit handler (a weak reference there) when no session recorded the
/// exit census: runs it with the queues' knowledge and prints it on stderr. The exit status
/// is left alone.
@_cdecl("dealloctrace_census_at_exit")
func dealloctraceCensusAtExit() {
  Census.runAndReport(label: "exit", in: nil)
}
