import DeallocLog
import DeallocTrace

#if canImport(Glibc)
  import Glibc
#endif

/// Reads the enqueue stack of a leaked object back from this process's own trace log.
///
/// Why from the log: the recorder keeps stacks as raw addresses on the enqueuing thread and
/// names them on its writer thread, so the names exist only in the file. Looking them up
/// costs a flush and one read of the log, which is paid only when a leak check fails, never
/// on the enqueue path.
enum EnqueueStackLookup {
  /// One enqueue as the log has it.
  struct Enqueue: Equatable {
    /// The label of the queue it was handed to.
    var queue: String
    /// The program frames (queue and tracer frames left out), innermost first.
    var frames: [String]
  }

  /// The enqueue of object `id` in this process's latest session in `log`; `nil` when the
  /// log does not have it.
  static func enqueue(ofObject id: UInt64, in log: String) -> Enqueue? {
    DeallocTrace.flush()
    var finder = EnqueueStackFinder(id: id, pid: Int64(getpid()))
    var reader = LogReader()
    do {
      try reader.read([LogInput(path: log)], into: &finder)
    } catch {
      return nil  // best effort: a failure message never fails for want of a stack
    }
    return finder.queue.map { queue in
      Enqueue(queue: queue, frames: finder.frames.map(\.displayName))
    }
  }
}

/// Collects the queue and stack of one enqueue in the last session that this process wrote.
private struct EnqueueStackFinder: LogVisitor {
  let id: UInt64
  let pid: Int64
  private var inOurSession = false
  private var stacks = EnqueueStacks()
  private(set) var queue: String?
  /// The program's frames of the enqueue (``EnqueueStacks/programFrames(of:)``).
  private(set) var frames: [Frame] = []

  init(id: UInt64, pid: Int64) {
    self.id = id
    self.pid = pid
  }

  mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
    switch event {
    case .sessionBegan(let session):
      // A later session of this process (start after finish) supersedes an earlier one.
      inOurSession = session.record.pid == pid
      if inOurSession {
        stacks.removeAll()
        queue = nil
        frames = []
      }
    case .record(.stack(let stack)) where inOurSession:
      stacks.record(stack)
    case .record(.enqueue(let enqueue)) where inOurSession && enqueue.id == id:
      queue = enqueue.queue
      frames = stacks.programFrames(of: enqueue)
    default:
      break
    }
  }

  mutating func warn(_ warning: LogWarning) {}
}
