import DeallocWire

/// One decoded record of a v1 log (see `docs/log-format.md`).
///
/// Only the fields the contract defines are kept; unknown fields are ignored while parsing.
/// Times are nanoseconds since the session's start. Addresses are kept as integers and
/// formatted back as lower-case hex (``Address``), so comparing them costs nothing.
///
/// Not closed: the log format adds record kinds within a version (`holders` came after the
/// first release), and each one the reader learns becomes a case here. A `switch` over it
/// outside this package should have a `default:`.
///
/// The kinds that make up nearly every line (`enqueue`, `release`, `dealloc`, `drain`) are
/// stored inline; the others are `indirect` (boxed), so that a record is only as large as an
/// `enqueue` and moving one from the reader to the analyzer copies that, not the largest kind.
public enum LogRecord: Sendable, Equatable {
  indirect case session(SessionRecord)
  indirect case thread(ThreadRecord)
  indirect case stack(StackRecord)
  case enqueue(EnqueueRecord)
  case drain(DrainRecord)
  case release(ReleaseRecord)
  case dealloc(DeallocRecord)
  indirect case mark(MarkRecord)
  indirect case check(CheckRecord)
  indirect case end(EndRecord)
  /// `holders`: who held an object when the recorder scanned for it.
  indirect case holders(HolderRecord)
  /// The log reached its size limit here; later records were not written.
  indirect case cut(CutRecord)
  /// `census`: the objects the program could no longer reach (a leak census).
  indirect case census(CensusRecord)
  /// A kind this reader does not know. The reader skips and counts these; visitors never see them.
  indirect case unknown(kind: String)

  /// The record's time, when its kind has one (`stack` and `thread` have none).
  public var time: Int64? {
    switch self {
    case .session(let r): return r.time
    case .enqueue(let r): return r.time
    case .drain(let r): return r.time
    case .release(let r): return r.time
    case .dealloc(let r): return r.time
    case .mark(let r): return r.time
    case .check(let r): return r.time
    case .end(let r): return r.time
    case .holders(let r): return r.time
    case .cut(let r): return r.time
    case .census(let r): return r.time
    case .thread, .stack, .unknown: return nil
    }
  }
}

/// An object address, as written in the log (`"0x7f3a…"`).
///
/// Kept inverted: a process that holds addresses of its own live objects (the leak
/// assertions keep the holder paths of the objects they report while they scan for the
/// next) must not hand the holder scan and the census a word that reads as a reference to
/// them. The price is one NOT per access; equality and hashing use the stored word as is.
public struct Address: Sendable, Hashable, Comparable, CustomStringConvertible {
  private var inverted: UInt64

  public var rawValue: UInt64 {
    get { ~inverted }
    set { inverted = ~newValue }
  }

  public init(_ rawValue: UInt64) {
    inverted = ~rawValue
  }

  /// Lower-case hex with the `0x` prefix, exactly as the recorder writes it.
  public var description: String { "0x" + String(rawValue, radix: 16) }

  public static func < (lhs: Address, rhs: Address) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// `session`: starts a session.
public struct SessionRecord: Sendable, Equatable {
  public var version: Int
  public var time: Int64
  public var pid: Int64?
  public var executable: String?
  public var wallClock: String?
  public var delayMilliseconds: Double?
  public var frames: Int?
  /// Whether the recorder scanned for holders in this session (`"holders":true`; absent
  /// means off).
  public var holders: Bool
  /// The `DEALLOCTRACE_HISTORY` patterns the recorder read (`history`; nil when absent).
  public var historyPatterns: String?

  public init(
    version: Int, time: Int64 = 0, pid: Int64? = nil, executable: String? = nil,
    wallClock: String? = nil,
    delayMilliseconds: Double? = nil, frames: Int? = nil, holders: Bool = false,
    historyPatterns: String? = nil
  ) {
    self.holders = holders
    self.historyPatterns = historyPatterns
    self.version = version
    self.time = time
    self.pid = pid
    self.executable = executable
    self.wallClock = wallClock
    self.delayMilliseconds = delayMilliseconds
    self.frames = frames
  }
}

/// `thread`: names an OS thread.
public struct ThreadRecord: Sendable, Equatable {
  public var tid: Int64
  public var name: String

  public init(tid: Int64, name: String) {
    self.tid = tid
    self.name = name
  }
}

/// `stack`: an interned backtrace, innermost frame first.
public struct StackRecord: Sendable, Equatable {
  public var id: Int64
  public var frames: [Frame]

  public init(id: Int64, frames: [Frame]) {
    self.id = id
    self.frames = frames
  }
}

/// `enqueue`: an object was handed to a queue.
public struct EnqueueRecord: Sendable, Equatable {
  public var time: Int64
  public var id: UInt64
  public var object: Address
  public var type: String
  public var queue: String
  // The optional fields, packed (``PackedOptionals``): as four `Optional`s they padded the
  // record from 96 bytes to 120, and every record is copied on its way from the reader to the
  // analyzer (nearly every line of a log is an enqueue or a release, and this is the largest
  // of their payloads).
  private var tidValue: Int64 = 0
  private var depthValue = 0
  private var stackValue: Int64 = 0
  private var retainCountValue = 0
  private var present = PackedOptionals()
  /// ``type``'s and ``queue``'s ids when a ``LogReader`` read the record (``NameID``). Two
  /// bytes each, after ``present``: they fit in its padding, so the record is no larger.
  package var typeID = NameID.none
  package var queueID = NameID.none
  private static let tidBit: UInt8 = 1
  private static let depthBit: UInt8 = 2
  private static let stackBit: UInt8 = 4
  private static let retainCountBit: UInt8 = 8

  public var tid: Int64? {
    get { present.value(tidValue, bit: Self.tidBit) }
    set { present.store(newValue, bit: Self.tidBit, in: &tidValue) }
  }
  public var depth: Int? {
    get { present.value(depthValue, bit: Self.depthBit) }
    set { present.store(newValue, bit: Self.depthBit, in: &depthValue) }
  }
  public var stack: Int64? {
    get { present.value(stackValue, bit: Self.stackBit) }
    set { present.store(newValue, bit: Self.stackBit, in: &stackValue) }
  }
  public var retainCount: Int? {
    get { present.value(retainCountValue, bit: Self.retainCountBit) }
    set { present.store(newValue, bit: Self.retainCountBit, in: &retainCountValue) }
  }

  // Inlined into the reader's parse: a call, with its nine arguments and four optionals
  // passed through memory, was about a hundred instructions per enqueue line.
  @inline(__always)
  public init(
    time: Int64, id: UInt64, object: Address, type: String, queue: String, tid: Int64? = nil,
    depth: Int? = nil, stack: Int64? = nil, retainCount: Int? = nil
  ) {
    self.time = time
    self.id = id
    self.object = object
    self.type = type
    self.queue = queue
    tidValue = tid ?? 0
    depthValue = depth ?? 0
    stackValue = stack ?? 0
    retainCountValue = retainCount ?? 0
    present = PackedOptionals(
      bits: (tid == nil ? 0 : Self.tidBit) | (depth == nil ? 0 : Self.depthBit)
        | (stack == nil ? 0 : Self.stackBit) | (retainCount == nil ? 0 : Self.retainCountBit))
  }
}

/// `drain`: a queue began releasing a batch.
public struct DrainRecord: Sendable, Equatable {
  public var time: Int64
  public var queue: String
  /// ``queue``'s id when a ``LogReader`` read the record (``NameID``).
  package var queueID = NameID.none
  public var count: Int
  public var tid: Int64?
  /// The `why` as written: a recorder may add reasons, which old readers keep as text.
  public var reason: String?

  public init(time: Int64, queue: String, count: Int, tid: Int64? = nil, reason: String? = nil) {
    self.time = time
    self.queue = queue
    self.count = count
    self.tid = tid
    self.reason = reason
  }

  /// ``reason`` as the queue's own ``DeallocWire/DrainReason``, when it is one of them.
  package var drainReason: DrainReason? { reason.flatMap(DrainReason.init(rawValue:)) }
}

/// `release`: the queue dropped its reference to an object.
public struct ReleaseRecord: Sendable, Equatable {
  public var time: Int64
  public var id: UInt64
  public var tid: Int64?
  /// Exact: whether this release deallocated the object.
  public var freed: Bool
  /// The strong retain count left when the object survived.
  public var retainCount: Int?

  public init(time: Int64, id: UInt64, tid: Int64? = nil, freed: Bool, retainCount: Int? = nil) {
    self.time = time
    self.id = id
    self.tid = tid
    self.freed = freed
    self.retainCount = retainCount
  }
}

/// `dealloc`: a survivor of its release has since been deallocated.
public struct DeallocRecord: Sendable, Equatable {
  public var time: Int64
  public var id: UInt64

  public init(time: Int64, id: UInt64) {
    self.time = time
    self.id = id
  }
}

/// `mark`: a checkpoint the program set.
public struct MarkRecord: Sendable, Equatable {
  public var time: Int64
  public var label: String
  public var tid: Int64?

  public init(time: Int64, label: String, tid: Int64? = nil) {
    self.time = time
    self.label = label
    self.tid = tid
  }
}

/// `check`: a leak assertion looked at an object.
public struct CheckRecord: Sendable, Equatable {
  public var time: Int64
  public var object: Address
  public var type: String
  /// ``type``'s id when a ``LogReader`` read the record (``NameID``).
  package var typeID = NameID.none
  public var alive: Bool
  public var label: String
  /// Present when the tracer knew the object.
  public var id: UInt64?

  public init(
    time: Int64, object: Address, type: String, alive: Bool, label: String, id: UInt64? = nil
  ) {
    self.time = time
    self.object = object
    self.type = type
    self.alive = alive
    self.label = label
    self.id = id
  }
}

/// `end`: the session closed cleanly.
public struct EndRecord: Sendable, Equatable {
  public var time: Int64
  public var reason: String
  public var pending: Int
  public var lost: Int
  /// Holder scans made, when holders were on.
  public var holderScans: Int?
  /// Holder scans skipped by the recorder's caps (per session, per finding signature).
  public var holderScansSkipped: Int?
  /// Records not written after a `cut` (0 when the log was not cut).
  public var unwritten: Int

  public init(
    time: Int64, reason: String, pending: Int, lost: Int, unwritten: Int = 0,
    holderScans: Int? = nil,
    holderScansSkipped: Int? = nil
  ) {
    self.holderScans = holderScans
    self.holderScansSkipped = holderScansSkipped
    self.time = time
    self.reason = reason
    self.pending = pending
    self.lost = lost
    self.unwritten = unwritten
  }
}

/// `cut`: the log reached `DEALLOCTRACE_MAX_SIZE`; from here on the recorder only counted
/// records (`end`'s `unwritten`), so objects after it have unknown fates.
public struct CutRecord: Sendable, Equatable {
  public var time: Int64
  /// The size limit in bytes, when stated.
  public var maxSize: Int?

  public init(time: Int64, maxSize: Int? = nil) {
    self.time = time
    self.maxSize = maxSize
  }
}

/// `holders`: who held object `obj` when the recorder scanned memory for it.
public struct HolderRecord: Sendable, Equatable {
  /// Why the recorder scanned. A struct with static members: the recorder may add reasons.
  public struct Reason: RawRepresentable, Sendable, Hashable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A traced release found a survivor; written right after its `release`.
    public static let release = Reason(rawValue: "release")
    /// A leak check saw the object alive outside any queue; right after the `check`.
    public static let check = Reason(rawValue: "check")
    /// A survivor still alive at the session's end; before `end`.
    public static let end = Reason(rawValue: "end")
  }

  public var time: Int64
  /// The tracer's id, when it knows the object (always for `release` and `end`).
  public var id: UInt64?
  public var object: Address
  public var type: String
  public var reason: Reason
  public var holders: HolderReport

  public init(
    time: Int64, id: UInt64? = nil, object: Address, type: String, reason: Reason,
    holders: HolderReport
  ) {
    self.time = time
    self.id = id
    self.object = object
    self.type = type
    self.reason = reason
    self.holders = holders
  }
}
