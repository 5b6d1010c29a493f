import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What the reader hands over, in order, besides the two most frequent records (which a
/// ``PipelinedBatch`` keeps apart).
///
/// Outside ``PipelinedVisitor`` on purpose: nested in the generic type, its layout depended
/// on the visitor's type, and every copy of an event went through a runtime metadata lookup
/// and value witnesses (a fifth of a clean report's instructions).
private enum PipelinedItem: Sendable {
  case file(String)
  case event(LogEvent, line: Int)
  case warning(LogWarning)
}

/// An enqueue or release record and its line, as a batch keeps it (see
/// ``LogVisitor/visitEnqueue(_:at:)``).
private struct Lined<Record> {
  var record: Record
  var line: Int
}

/// One batch of items, moved through the queue as a whole: the reader initializes each item
/// in place and the visitor's thread moves each out, so an event is copied once (into the
/// batch) instead of three times (in, out of the array, and destroyed with it).
///
/// Enqueues and releases sit in arrays of their own, each item its record's size, and a byte
/// per item keeps their order: in one array of an enum, every item took the largest case's
/// 112 bytes, a release too. The items are what crosses from the reader's core to the
/// visitor's, the bytes the visitor's thread waits for most (a cache simulation's largest
/// source of its misses), and releases are two fifths of a log's lines.
///
/// `@unchecked Sendable`: a batch belongs to one thread at a time, handed over under the
/// channel's lock (the reader fills it, the visitor empties it, the spare list returns it).
private final class PipelinedBatch: @unchecked Sendable {
  /// Which array item `n` is in.
  enum Kind: UInt8 {
    case enqueue
    case release
    case other
  }

  private let kinds: UnsafeMutablePointer<Kind>
  private let enqueues: UnsafeMutablePointer<Lined<EnqueueRecord>>
  private let releases: UnsafeMutablePointer<Lined<ReleaseRecord>>
  private let others: UnsafeMutablePointer<PipelinedItem>
  let capacity: Int
  // Unchecked: one thread at a time owns the batch (see above).
  @exclusivity(unchecked) private(set) var count = 0
  @exclusivity(unchecked) private var enqueueCount = 0
  @exclusivity(unchecked) private var releaseCount = 0
  @exclusivity(unchecked) private var otherCount = 0

  init(capacity: Int) {
    self.capacity = capacity
    kinds = .allocate(capacity: capacity)
    enqueues = .allocate(capacity: capacity)
    releases = .allocate(capacity: capacity)
    others = .allocate(capacity: capacity)
  }

  deinit {
    empty(from: Cursor())
    kinds.deallocate()
    enqueues.deallocate()
    releases.deallocate()
    others.deallocate()
  }

  var isEmpty: Bool { count == 0 }
  /// `>=`, not `==`: a batch that somehow went past its capacity must still read as full.
  var isFull: Bool { count >= capacity }

  // The two record kinds' appends inlined into the reader's calls: out of line, each cost a
  // call and a copy of the record per line.
  @inline(__always)
  func append(_ record: consuming EnqueueRecord, line: Int) {
    checkRoom()
    (enqueues + enqueueCount).initialize(to: Lined(record: record, line: line))
    enqueueCount += 1
    appendKind(.enqueue)
  }

  @inline(__always)
  func append(_ record: ReleaseRecord, line: Int) {
    checkRoom()
    (releases + releaseCount).initialize(to: Lined(record: record, line: line))
    releaseCount += 1
    appendKind(.release)
  }

  func append(_ item: consuming PipelinedItem) {
    checkRoom()
    (others + otherCount).initialize(to: item)
    otherCount += 1
    appendKind(.other)
  }

  /// Every append checks first, and traps rather than write past the buffers (each kind's
  /// count is at most ``count``). It never fires: ``PipelinedVisitor`` makes room before each
  /// append; the check is one compare per item.
  @inline(__always)
  private func checkRoom() {
    precondition(count < capacity, "a pipelined batch is full")
  }

  @inline(__always)
  private func appendKind(_ kind: Kind) {
    kinds[count] = kind
    count += 1
  }

  /// Where the consumer is: the next item, and the next of each kind.
  struct Cursor {
    var item = 0
    var enqueue = 0
    var release = 0
    var other = 0
  }

  /// The kind of the item at `cursor`; the consumer then takes it with the method for its
  /// kind, in order.
  @inline(__always)
  func kind(at cursor: Cursor) -> Kind { kinds[cursor.item] }

  @inline(__always)
  func takeEnqueue(_ cursor: inout Cursor) -> Lined<EnqueueRecord> {
    defer { cursor.enqueue += 1 }
    cursor.item += 1
    return (enqueues + cursor.enqueue).move()
  }

  @inline(__always)
  func takeRelease(_ cursor: inout Cursor) -> Lined<ReleaseRecord> {
    defer { cursor.release += 1 }
    cursor.item += 1
    return (releases + cursor.release).move()
  }

  @inline(__always)
  func takeOther(_ cursor: inout Cursor) -> PipelinedItem {
    defer { cursor.other += 1 }
    cursor.item += 1
    return (others + cursor.other).move()
  }

  /// Leaves the batch empty, dropping the items from `cursor` on (those not taken).
  func empty(from cursor: Cursor) {
    (enqueues + cursor.enqueue).deinitialize(count: enqueueCount - cursor.enqueue)
    (releases + cursor.release).deinitialize(count: releaseCount - cursor.release)
    (others + cursor.other).deinitialize(count: otherCount - cursor.other)
    count = 0
    enqueueCount = 0
    releaseCount = 0
    otherCount = 0
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

  /// Starts the visitor's thread. Call ``finish()`` to get the visitor back. `batchSize`
  /// (items per batch, at least 1) is ``batchSize`` but for tests and the fuzzer, which
  /// cross a batch's end every few items with it.
  package init(_ visitor: Visitor, batchSize: Int = Self.batchSize) {
    precondition(batchSize > 0, "a batch holds at least one item")
    channel = Channel(visitor, batchSize: batchSize)
    batch = PipelinedBatch(capacity: batchSize)
    let channel = self.channel
    // The default stack size: the visitor ends sessions (and may symbolize) on this thread.
    Thread { channel.consume() }.start()
  }

  package mutating func visit(_ event: consuming LogEvent, at location: LogLocation)
    throws(AnalysisError)
  {
    try noteFile(of: location)
    try makeRoom()
    batch.append(.event(event, line: location.line))
  }

  package mutating func visitEnqueue(_ record: consuming EnqueueRecord, at location: LogLocation)
    throws(AnalysisError)
  {
    try noteFile(of: location)
    try makeRoom()
    batch.append(record, line: location.line)
  }

  package mutating func visitRelease(_ record: ReleaseRecord, at location: LogLocation)
    throws(AnalysisError)
  {
    try noteFile(of: location)
    try makeRoom()
    batch.append(record, line: location.line)
  }

  /// Queues the input's name when it changes: items carry their line only.
  @inline(__always)
  private mutating func noteFile(of location: LogLocation) throws(AnalysisError) {
    guard location.file != file else { return }
    file = location.file
    try makeRoom()
    // A copy of its own: the visitor's thread must not share this string's storage.
    batch.append(.file(String(decoding: Array(location.file.utf8), as: UTF8.self)))
  }

  package mutating func warn(_ warning: LogWarning) {
    // The visitor's error, if any, is thrown at the next event or by `finish()`.
    try? makeRoom()
    batch.append(.warning(warning))
  }

  /// Hands a full batch over before an append, so that every append has room whatever the
  /// order of the items (a file's name, a warning, an event): checked after an append
  /// instead, an append that made no check (the name) could fill the batch unseen.
  @inline(__always)
  private mutating func makeRoom() throws(AnalysisError) {
    if batch.isFull { try send() }
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
    private let batchSize: Int

    init(_ visitor: Visitor, batchSize: Int) {
      self.visitor = visitor
      self.batchSize = batchSize
    }

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
      return spare.popLast() ?? PipelinedBatch(capacity: batchSize)
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
      var cursor = PipelinedBatch.Cursor()
      defer { batch.empty(from: cursor) }
      do throws(AnalysisError) {
        while cursor.item < batch.count {
          switch batch.kind(at: cursor) {
          case .enqueue:
            let item = batch.takeEnqueue(&cursor)
            location.line = item.line
            try visitor.visitEnqueue(item.record, at: location)
          case .release:
            let item = batch.takeRelease(&cursor)
            location.line = item.line
            try visitor.visitRelease(item.record, at: location)
          case .other:
            switch batch.takeOther(&cursor) {
            case .file(let name):
              file = name
              location.file = name
            case .event(let event, let line):
              location.line = line
              try visitor.visit(event, at: location)
            case .warning(let warning): visitor.warn(warning)
            }
          }
        }
      } catch {
        return error
      }
      return nil
    }
  }
}
