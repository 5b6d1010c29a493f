/// Who held an object when the recorder scanned memory for references to it: the body of a
/// `holders` log record, and of `DeallocTrace.holdersJSON(of:others:)` in-process (the
/// HOLDERS-VALUE of `docs/log-format.md`).
///
/// Why one model for both: the report, `explain`, `check` and the leak assertions' failure
/// messages all render a path the same way, so they share the parser
/// (``HolderReport/parse(json:)``) and the text (``HolderPathText``). The reader caps what it
/// keeps (``HolderLimits``), so a hostile or buggy record cannot grow memory without bound;
/// what it drops is counted, never silently lost.
public struct HolderReport: Sendable, Equatable {
  /// Distinct direct holders found: words that point at the object.
  public var direct: Int
  /// Direct holders beyond ``paths``: the recorder's `more`, plus the paths this reader
  /// dropped beyond ``HolderLimits/maximumPaths``.
  public var more: Int
  /// One path per direct holder, rooted paths first, then cycles, then unrooted; shorter
  /// first within each.
  public var paths: [HolderPath]
  /// Words that pointed at the object but were left out of ``direct`` and ``paths``, because
  /// its strong count was made up without them: stale copies on a stack, in non-Swift memory
  /// or in a Swift object where its metadata names no reference (the record's `surplus`; 0
  /// when absent).
  public var surplus: Int
  /// How long the scan took, in microseconds, when the record says.
  public var scanMicroseconds: Int?
  /// Where the object was allocated, innermost frame first: a `holders` record's optional
  /// `allocStack` (DEALLOCTRACE_ALLOC_STACKS); empty without one.
  public var allocationStack: [Frame]
  /// Its retains and releases: a `holders` record's optional `history`
  /// (DEALLOCTRACE_HISTORY); nil for a type under no history.
  public var retainHistory: RetainHistory?

  public init(
    direct: Int, more: Int, paths: [HolderPath], surplus: Int = 0, scanMicroseconds: Int? = nil,
    allocationStack: [Frame] = [], retainHistory: RetainHistory? = nil
  ) {
    self.allocationStack = allocationStack
    self.retainHistory = retainHistory
    self.direct = direct
    self.more = more
    self.paths = paths
    self.surplus = surplus
    self.scanMicroseconds = scanMicroseconds
  }

  /// The grouping key: the first path's ``HolderPath/groupingKey``, or `"no path"` when the
  /// scan found no holder at all (unlike `"none"`, a path that reached the depth limit).
  ///
  /// Why only the first path: it is the shortest rooted one, the reference to cut. Keying on
  /// every path would split a group whenever one member also had a stale stack slot pointing
  /// at it. The trade-off: two objects held by the same cache, one of them also held
  /// elsewhere by a shorter path, land in different groups.
  public var groupingKey: String {
    paths.first?.groupingKey ?? "no path"
  }
}

/// One chain of references from a root to the object.
public struct HolderPath: Sendable, Equatable {
  public var root: HolderRoot
  /// From the root to the object: `steps[0]` is the first heap object the root points at,
  /// and the last step's edge points at the object. Empty when the root holds it directly.
  public var steps: [HolderStep]
  /// Steps this reader dropped beyond ``HolderLimits/maximumSteps`` (from the middle of the
  /// path: the first steps and the last one are kept).
  public var omittedSteps: Int

  public init(root: HolderRoot, steps: [HolderStep], omittedSteps: Int = 0) {
    self.root = root
    self.steps = steps
    self.omittedSteps = omittedSteps
  }

  /// The root kind (and a global's symbol), then each step's type and edge name, joined by
  /// `" → "`: no address, offset, index or count, so that the same leak in two runs, or two
  /// objects held the same way, have the same key. A plain `String`, so that a finding's id
  /// can hash it.
  public var groupingKey: String {
    var parts: [String] = []
    switch root.kind {
    case .global: parts.append("global " + (root.symbol ?? "?"))
    default: parts.append(root.kind.rawValue)
    }
    for step in steps {
      switch step.edge {
      case .field(let name): parts.append(step.type + "." + name)
      case .element: parts.append(step.type + "[element]")
      case .captures(let types):
        parts.append(step.type + " captures(" + types.joined(separator: ", ") + ")")
      case .unnamed: parts.append(step.type)
      }
    }
    if omittedSteps > 0 { parts.append("…") }
    return parts.joined(separator: " → ")
  }
}

/// Where a path starts.
public struct HolderRoot: Sendable, Equatable {
  /// The kind of root. A struct with static members rather than an enum: the recorder may
  /// add kinds, and a reader keeps one it does not know by name.
  public struct Kind: RawRepresentable, Sendable, Hashable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A global variable's storage (`.data`/`.bss` of a module).
    public static let global = Kind(rawValue: "global")
    /// A thread's stack.
    public static let stack = Kind(rawValue: "stack")
    /// No root within the depth limit, and the chain leads back to the object.
    public static let cycle = Kind(rawValue: "cycle")
    /// Memory that is not a registered Swift object (a malloc'ed buffer); the chain stops.
    public static let heap = Kind(rawValue: "heap")
    /// The depth limit was reached before a root.
    public static let none = Kind(rawValue: "none")
  }

  public var kind: Kind
  /// A global's demangled symbol, when known.
  public var symbol: String?
  /// A global's module (its path, as the log writes it).
  public var module: String?
  /// A global's offset in its module, when it has no symbol.
  public var offset: UInt64?
  /// A stack's thread, when known.
  public var tid: Int64?

  public init(
    kind: Kind, symbol: String? = nil, module: String? = nil, offset: UInt64? = nil,
    tid: Int64? = nil
  ) {
    self.kind = kind
    self.symbol = symbol
    self.module = module
    self.offset = offset
    self.tid = tid
  }
}

/// One holder on a path: an object, and the reference in it that points at the next one.
public struct HolderStep: Sendable, Equatable {
  /// The holder's fully qualified type name, or `closure context` / `box`.
  public var type: String
  public var address: Address?
  /// The byte offset of the reference inside the holder.
  public var offset: Int?
  public var edge: HolderEdge

  public init(type: String, address: Address? = nil, offset: Int? = nil, edge: HolderEdge) {
    self.type = type
    self.address = address
    self.offset = offset
    self.edge = edge
  }
}

/// How a holder refers to the next object on its path.
///
/// A closed set (log format v1 defines exactly these); a record with an edge this reader
/// does not know reads as ``unnamed``, which renders the offset alone.
public enum HolderEdge: Sendable, Equatable {
  /// A stored property, named from the runtime's field metadata.
  case field(String)
  /// An element of array storage, and the array's count.
  case element(index: Int, count: Int?)
  /// A closure context or box, and the types it captures in order.
  case captures([String])
  /// A word the recorder could not name: only the holder's offset is known.
  case unnamed
}
