/// One decoded record of a v1 log (see `docs/log-format.md`).
///
/// Only the fields the contract defines are kept; unknown fields are ignored while parsing.
/// Times are nanoseconds since the session's start. Addresses are kept as integers and
/// formatted back as lower-case hex (``Address``), so comparing them costs nothing.
public enum LogRecord: Sendable, Equatable {
  case session(SessionRecord)
  case thread(ThreadRecord)
  case stack(StackRecord)
  case enqueue(EnqueueRecord)
  case drain(DrainRecord)
  case release(ReleaseRecord)
  case dealloc(DeallocRecord)
  case mark(MarkRecord)
  case check(CheckRecord)
  case end(EndRecord)
  /// A kind this reader does not know. The reader skips and counts these; visitors never see them.
  case unknown(kind: String)

  /// The record's time, when its kind has one (`stack` and `thread` have none).
  public var time: Int64? {
    switch self {
    case .session(let r): return r.t
    case .enqueue(let r): return r.t
    case .drain(let r): return r.t
    case .release(let r): return r.t
    case .dealloc(let r): return r.t
    case .mark(let r): return r.t
    case .check(let r): return r.t
    case .end(let r): return r.t
    case .thread, .stack, .unknown: return nil
    }
  }
}

/// An object address, as written in the log (`"0x7f3a…"`).
public struct Address: Sendable, Hashable, Comparable, CustomStringConvertible {
  public var rawValue: UInt64

  public init(_ rawValue: UInt64) {
    self.rawValue = rawValue
  }

  /// Lower-case hex with the `0x` prefix, exactly as the recorder writes it.
  public var description: String { "0x" + String(rawValue, radix: 16) }

  public static func < (lhs: Address, rhs: Address) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// `session`: starts a session.
public struct SessionRecord: Sendable, Equatable {
  public var v: Int
  public var t: Int64
  public var pid: Int64?
  public var exe: String?
  public var wall: String?
  public var delayMs: Double?
  public var frames: Int?

  public init(
    v: Int, t: Int64 = 0, pid: Int64? = nil, exe: String? = nil, wall: String? = nil,
    delayMs: Double? = nil, frames: Int? = nil
  ) {
    self.v = v
    self.t = t
    self.pid = pid
    self.exe = exe
    self.wall = wall
    self.delayMs = delayMs
    self.frames = frames
  }
}

/// `thread`: names an OS thread.
public struct ThreadRecord: Sendable, Equatable {
  public var tid: Int64
  public var name: String
}

/// `stack`: an interned backtrace, innermost frame first.
public struct StackRecord: Sendable, Equatable {
  public var id: Int64
  public var frames: [Frame]
}

/// `enqueue`: an object was handed to a queue.
public struct EnqueueRecord: Sendable, Equatable {
  public var t: Int64
  public var id: UInt64
  public var obj: Address
  public var type: String
  public var q: String
  public var tid: Int64?
  public var depth: Int?
  public var stack: Int64?
  public var rc: Int?
}

/// `drain`: a queue began releasing a batch.
public struct DrainRecord: Sendable, Equatable {
  public var t: Int64
  public var q: String
  public var n: Int
  public var tid: Int64?
  public var why: String?
}

/// `release`: the queue dropped its reference to an object.
public struct ReleaseRecord: Sendable, Equatable {
  public var t: Int64
  public var id: UInt64
  public var tid: Int64?
  /// Exact: whether this release deallocated the object.
  public var freed: Bool
  /// The strong retain count left when the object survived.
  public var rc: Int?
}

/// `dealloc`: a survivor of its release has since been deallocated.
public struct DeallocRecord: Sendable, Equatable {
  public var t: Int64
  public var id: UInt64
}

/// `mark`: a checkpoint the program set.
public struct MarkRecord: Sendable, Equatable {
  public var t: Int64
  public var label: String
  public var tid: Int64?
}

/// `check`: a leak assertion looked at an object.
public struct CheckRecord: Sendable, Equatable {
  public var t: Int64
  public var obj: Address
  public var type: String
  public var alive: Bool
  public var label: String
  /// Present when the tracer knew the object.
  public var id: UInt64?
}

/// `end`: the session closed cleanly.
public struct EndRecord: Sendable, Equatable {
  public var t: Int64
  public var why: String
  public var pending: Int
  public var lost: Int
}
