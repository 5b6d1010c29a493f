import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What the reader hands over, in order.
///
/// Outside ``PipelinedVisitor`` on purpose: nested in the generic type, its layout depended
/// on the visitor's type, and every copy of an event went through a runtime metadata lookup
/// and value witnesses (a fifth of a clean report's instructions).
private enum PipelinedItem: Sendable {
  case file(String)
  case event(LogEvent, line: Int)
  /// The two most frequent records on their own (see ``LogVisitor/visitEnqueue(_:at:)``).
  case enqueue(EnqueueRecord, line: Int)
  case release(ReleaseRecord, line: Int)
  case warning(LogWarning)
}

/// One batch of items, moved through the queue as a whole: the reader initializes each item
/// in place and the visitor's thread moves each out, so an event is copied once (into the
/// batch) instead of three times (in, out of the array, and destroyed with it).
///
/// `@unchecked Sendable`: a batch belongs to one thread at a time, handed over under the
/// channel's lock (the reader fills it, the visitor empties it, the spare list returns it).
private final class PipelinedBatch: @unchecked Sendable {
  private let items: UnsafeMutablePointer<PipelinedItem>
  let capacity: Int
  /// Unchecked: one thread at a time owns the batch (see above).
  @exclusivity(unchecked) private(set) var count = 0

  init(capacity: Int) {
    self.capacity = capacity
    items = .allocate(capacity: capacity)
  }

  deinit {
    items.deinitialize(count: count)
    items.deallocate()
  }

  var isEmpty: Bool { count == 0 }
  var isFull: Bool { count == capacity }

  func append(_ item: consuming PipelinedItem) {
    (items + count).initialize(to: item)
    count += 1
  }

  /// Moves item `index` out; the consumer takes items in order, then calls
  /// ``empty(from:)``.
  @inline(__always)
  func take(_ index: Int) -> PipelinedItem {
    (items + index).move()
  }

  /// Leaves the batch empty, dropping the items from `index` on (those not taken).
  func empty(from index: Int) {
    (items + index).deinitialize(count: count - index)
    count = 0
  }
}

/// Runs a ``LogVisitor`` on a thread of its own, fed in batches by the reading thread: the
/// reader splits and parses on one core while the visitor (the analyzer) works on the other.
///
/// Why a visitor and not a split inside the reader: the reader's loop, where the session
/// bookkeeping and its warnings live, stays one loop on one thread, and any visitor can be
/// pipelined. Events and warnings travel in one queue in the order the reader made them, so
/// the visitor sees exactly what it would have seen inline: the output cannot depend on the
/// threads' timing.
///
/// The trade-offs: a batch holds at most ``batchSize`` events and at most ``batchesInFlight``
/// are queued, so memory stays bounded (a few megabytes) whatever the input; an error the
/// visitor throws reaches the reader at its next event rather than at once, so the reader may
/// parse up to that many more lines before it stops (the error is the same). Events carry
/// their line number only, and the file name travels once per input, so that the two threads
/// do not share the reference count of the name's storage for every record.
package struct PipelinedVisitor<Visitor: LogVisitor & SendableMetatype>: LogVisitor {
  /// Events per batch: enough to make the hand-over's lock rare, few enough to stay in cache.
  static var batchSize: Int { 2048 }
  /// Batches queued before the reader waits for the visitor: two keep the visitor busy while
  /// the reader fills the next, and when the visitor is the slower (a leak-heavy log), what
  /// is queued is what it still has to do after the last line is read, before the report
  /// can end. Four left about a millisecond and a half of it.
  static var batchesInFlight: Int { 2 }

  private let channel: Channel
  private var batch: PipelinedBatch
  private var file: String?

  /// Inputs smaller than this are read on one thread: starting a thread and handing batches
  /// over would cost more than it saves.
  package static var minimumBytes: Int { 8 << 20 }

  /// Whether a second thread pays for `inputs`: more than one core, and inputs of
  /// ``minimumBytes`` or more, or of unknown size (standard input, FIFOs).
  package static func pays(for inputs: [LogInput]) -> Bool {
    guard sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1 else { return false }
    var total = 0
    for input in inputs {
      guard let path = input.path else { return true }
      var info = stat()
      guard stat(path, &info) == 0 else { return false }
      guard info.st_mode & S_IFMT == S_IFREG else { return true }
      total += Int(info.st_size)
    }
    return total >= minimumBytes
  }

  /// Starts the visitor's thread. Call ``finish()`` to get the visitor back.
  package init(_ visitor: Visitor) {
    channel = Channel(visitor)
    batch = PipelinedBatch(capacity: Self.batchSize)
    let channel = self.channel
    // The default stack size: the visitor ends sessions (and may symbolize) on this thread.
    Thread { channel.consume() }.start()
  }

  package mutating func visit(_ event: consuming LogEvent, at location: LogLocation)
    throws(AnalysisError)
  {
    noteFile(of: location)
    batch.append(.event(event, line: location.line))
    if batch.isFull { try send() }
  }

  package mutating func visitEnqueue(_ record: consuming EnqueueRecord, at location: LogLocation)
    throws(AnalysisError)
  {
    noteFile(of: location)
    batch.append(.enqueue(record, line: location.line))
    if batch.isFull { try send() }
  }

  package mutating func visitRelease(_ record: ReleaseRecord, at location: LogLocation)
    throws(AnalysisError)
  {
    noteFile(of: location)
    batch.append(.release(record, line: location.line))
    if batch.isFull { try send() }
  }

  /// Queues the input's name when it changes: items carry their line only.
  @inline(__always)
  private mutating func noteFile(of location: LogLocation) {
    guard location.file != file else { return }
    file = location.file
    // A copy of its own: the visitor's thread must not share this string's storage.
    batch.append(.file(String(decoding: Array(location.file.utf8), as: UTF8.self)))
  }

  package mutating func warn(_ warning: LogWarning) {
    batch.append(.warning(warning))
    if batch.isFull { try? send() }
  }

  /// Hands the pending batch over; throws the visitor's error, if it threw one.
  private mutating func send() throws(AnalysisError) {
    batch = channel.put(batch)
    if let error = channel.error { throw error }
  }

  /// Waits for the visitor to see everything and returns it; throws the error it threw.
  package consuming func finish() throws(AnalysisError) -> Visitor {
    let visitor = channel.close(remaining: batch)
    if let error = channel.error { throw error }
    return visitor
  }

  /// The queue between the two threads, and the visitor while its thread owns it.
  ///
  /// `@unchecked Sendable`: every field is read and written under `condition`'s lock, except
  /// `visitor`, which only the visitor's thread touches until it sets `finished` (under the
  /// lock), and only the reading thread after: a hand-over, never shared access.
  private final class Channel: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [PipelinedBatch] = []
    private var spare: [PipelinedBatch] = []
    private var closed = false
    private var finished = false
    /// Unchecked: see the type's comment; the runtime's check was a call per event.
    @exclusivity(unchecked) private var visitor: Visitor
    private var thrown: AnalysisError?

    init(_ visitor: Visitor) { self.visitor = visitor }

    var error: AnalysisError? {
      condition.lock()
      defer { condition.unlock() }
      return thrown
    }

    /// Queues `batch`, waiting while the queue is full; returns an empty array to fill next.
    func put(_ batch: PipelinedBatch) -> PipelinedBatch {
      condition.lock()
      defer { condition.unlock() }
      while queue.count >= PipelinedVisitor.batchesInFlight && thrown == nil {
        condition.wait()
      }
      if thrown == nil { queue.append(batch) }
      condition.broadcast()
      return spare.popLast() ?? PipelinedBatch(capacity: PipelinedVisitor.batchSize)
    }

    /// Queues the last batch, waits for the visitor's thread to finish, and returns the
    /// visitor.
    func close(remaining: PipelinedBatch) -> Visitor {
      condition.lock()
      if !remaining.isEmpty && thrown == nil { queue.append(remaining) }
      closed = true
      condition.broadcast()
      while !finished { condition.wait() }
      condition.unlock()
      return visitor
    }

    /// The visitor's thread: applies batches in order until the queue is closed and empty,
    /// or the visitor throws.
    func consume() {
      while true {
        condition.lock()
        while queue.isEmpty && !closed { condition.wait() }
        guard !queue.isEmpty else {
          finished = true
          condition.broadcast()
          condition.unlock()
          return
        }
        let batch = queue.removeFirst()
        condition.broadcast()
        condition.unlock()
        let error = apply(batch)
        condition.lock()
        if spare.count < PipelinedVisitor.batchesInFlight { spare.append(batch) }
        if let error {
          thrown = error
          queue.removeAll()
          finished = true
          condition.broadcast()
          condition.unlock()
          return
        }
        condition.unlock()
      }
    }

    /// The current input's name, on the visitor's thread only.
    @exclusivity(unchecked) private var file = ""

    /// Hands `batch`'s items to the visitor in order, and leaves it empty; stops at the
    /// first error the visitor throws, dropping the rest.
    ///
    /// A loop here, not a closure over the batch: the location, one per batch with its line
    /// set per event, is then a local the visitor borrows. Built from the stored name for
    /// each event (or captured by a closure), it cost a retain and a release of the name's
    /// storage per event, two atomic operations.
    private func apply(_ batch: PipelinedBatch) -> AnalysisError? {
      var location = LogLocation(file: file, line: 0)
      var index = 0
      defer { batch.empty(from: index) }
      do throws(AnalysisError) {
        while index < batch.count {
          let item = batch.take(index)
          index += 1
          switch consume item {
          case .file(let name):
            file = name
            location.file = name
          case .event(let event, let line):
            location.line = line
            try visitor.visit(event, at: location)
          case .enqueue(let record, let line):
            location.line = line
            try visitor.visitEnqueue(record, at: location)
          case .release(let record, let line):
            location.line = line
            try visitor.visitRelease(record, at: location)
          case .warning(let warning): visitor.warn(warning)
          }
        }
      } catch {
        return error
      }
      return nil
    }
  }
}
