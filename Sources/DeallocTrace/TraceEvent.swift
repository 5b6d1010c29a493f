import DeallocHooks

/// One record as the calling thread hands it to the writer: fixed-size, no formatting.
///
/// The hot path fills this in and copies it into the `EventBuffer`; everything that costs
/// (type names, stacks, symbols, JSON) happens on the writer thread. Each kind names its
/// own fields in `Payload`, and an event is as large as its largest kind (an enqueue): only
/// the holder scan's case is `indirect`, since a scan's answer is allocated anyway and it
/// would otherwise make every event larger; making any other event never allocates.
struct TraceEvent: @unchecked Sendable {
  /// Nanoseconds since the session started (monotonic).
  var time: UInt64
  var threadID: Int64
  var payload: Payload
  /// Where this event's frames start in the buffer's frame array, and how many.
  var frameStart = 0
  var frameCount = 0

  init(time: UInt64, threadID: Int64 = 0, _ payload: Payload) {
    self.time = time
    self.threadID = threadID
    self.payload = payload
  }

  enum Payload {
    /// A thread's first record in the session; `name` is its name (`main` for the main one).
    case thread(name: String)
    case enqueue(Enqueue)
    /// A queue began releasing a batch of `count` traced entries.
    case drain(queue: String, count: Int, why: DrainReason)
    case release(objectID: UInt64, outcome: ReleaseOutcome)
    /// A survivor was seen dead.
    case dealloc(objectID: UInt64)
    case mark(label: String)
    case check(Check)
    indirect case holders(HolderScan)
    /// A leak census: the `census` record's members, as the census wrote them (JSON).
    case census(members: String)
  }

  /// An object handed to a queue.
  struct Enqueue {
    var objectID: UInt64
    /// The object's address, hidden (`HiddenAddress`): a buffered record must not read as
    /// a holder to a reference scan.
    var hiddenAddress: UInt
    /// Resolved to a type name on the writer thread: the object's type, or a boxed value's.
    var metatype: UnsafeRawPointer
    var queue: String
    /// How many entries the queue held with this one.
    var depth: Int
    /// The retain count before the queue took the object.
    var retainCount: Int
    /// A queued collection's element count (the record's `count`); nil for anything else.
    var elementCount: Int?
  }

  /// What the queue's release of a traced object did.
  enum ReleaseOutcome {
    case freed
    /// Someone else still holds the object: the strong references left besides ours.
    case survived(retainCount: Int)
  }

  /// What a leak assertion saw about an object.
  struct Check {
    /// 0 when the tracer does not know the object.
    var objectID: UInt64
    var hiddenAddress: UInt
    var type: RecordedType
    var alive: Bool
    var label: String
  }

  /// Who held an object, as the scanner found it.
  struct HolderScan {
    /// 0 when the tracer does not know the object.
    var objectID: UInt64
    var hiddenAddress: UInt
    var type: RecordedType
    var why: HolderScanReason
    /// What the scanner found: the record's HOLDERS-VALUE members.
    var holders: HoldersValue
    /// Where the object was allocated, innermost return address first (empty without
    /// allocation stacks): the record's `allocStack`.
    var allocationStack: [UInt] = []
    /// Its retains and releases (DEALLOCTRACE_HISTORY, for a type it names): the record's
    /// `history`; nil for every other type.
    var history: RetainHistory?
  }

  /// An object's retain/release history as the side table kept it (CHoldersHistory.h).
  struct RetainHistory {
    struct Event {
      /// The log's `op`: `retain`, `release`, `alloc` or `enqueue`.
      var op: StaticString
      /// The strong count after it; -1 when unknown.
      var countAfter: Int
      /// Innermost return address first.
      var frames: [UInt]
    }

    var events: [Event]
    /// Paired events the per-object cap dropped.
    var dropped: UInt64
    /// Events the full tables could not keep, in the whole process so far.
    var lost: UInt64
  }

  /// An object's type: its metatype, named on the writer thread, or a name given by a
  /// caller that holds no reference to the object.
  enum RecordedType {
    case metatype(UnsafeRawPointer)
    case name(String)
  }
}
