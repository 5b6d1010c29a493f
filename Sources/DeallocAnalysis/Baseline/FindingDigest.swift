import DeallocLog

/// What a baseline and a diff keep of a finding: its id, kind, type, count and the names of
/// its signature frames; enough to match it across runs and for a person to recognise it,
/// without the examples, addresses and times that differ on every run.
public struct FindingDigest: Sendable, Equatable {
  /// A finding of the queue's records, or a leak group of the whole-process census: one
  /// baseline, one diff and one set of CI outputs for both.
  ///
  /// Closed: these are the two sources of findings.
  public enum Kind: Sendable, Hashable, Comparable {
    case finding(Finding.Kind)
    /// A census finding of the program (`ROOT CYCLE` or `ROOT LEAK`); library leaks are
    /// never digested.
    case process(CensusGroup.Kind)

    /// As files write it: a finding's kind, `processCycle` or `processLeak`.
    public var rawValue: String {
      switch self {
      case .finding(let kind): return kind.rawValue
      case .process(.cycle): return "processCycle"
      case .process(.leak): return "processLeak"
      }
    }

    public init?(rawValue: String) {
      switch rawValue {
      case "processCycle": self = .process(.cycle)
      case "processLeak": self = .process(.leak)
      default:
        guard let kind = Finding.Kind(rawValue: rawValue) else { return nil }
        self = .finding(kind)
      }
    }

    /// Every kind a file may name, in order.
    public static let allRawValues =
      Finding.Kind.allCases.map(\.rawValue) + ["processCycle", "processLeak"]

    public var title: String {
      switch self {
      case .finding(let kind): return kind.title
      case .process(.cycle): return "process leak (ROOT CYCLE)"
      case .process(.leak): return "process leak (ROOT LEAK)"
      }
    }

    /// The queue's findings first, in their order, then the census's.
    public static func < (lhs: Kind, rhs: Kind) -> Bool {
      switch (lhs, rhs) {
      case (.finding(let l), .finding(let r)): return l < r
      case (.finding, .process): return true
      case (.process, .finding): return false
      case (.process(let l), .process(let r)): return l == .cycle && r == .leak
      }
    }
  }

  public var id: FindingID
  public var kind: Kind
  /// The finding's type; a census finding's root type.
  public var type: String
  /// Objects (checks, for true leaks) in the finding; a census finding's groups.
  public var count: Int
  /// The signature frames' names, innermost first, as the id hashes them
  /// (``FindingID/stableName(of:)``: a frame without a symbol is its module's file name,
  /// never an offset), so that a baseline rewritten after a rebuild does not change. A
  /// census finding's cycle instead, one `Type.field` per reference.
  public var frames: [String]

  public init(id: FindingID, kind: Finding.Kind, type: String, count: Int, frames: [String]) {
    self.init(id: id, kind: .finding(kind), type: type, count: count, frames: frames)
  }

  public init(id: FindingID, kind: Kind, type: String, count: Int, frames: [String]) {
    self.id = id
    self.kind = kind
    self.type = type
    self.count = count
    self.frames = frames
  }

  /// The digest of `finding` (or of the part of it a gate counted).
  public init(_ finding: Finding) {
    self.init(
      id: finding.id, kind: finding.kind, type: finding.signature.type, count: finding.count,
      frames: finding.signature.frames.map(FindingID.stableName))
  }

  /// The digest of a census finding (`nil` when its id is not 12 hex digits): its groups
  /// count, its cycle stands for the frames.
  public init?(_ group: CensusGroup) {
    guard let id = FindingID(parsing: group.id) else { return nil }
    self.init(
      id: id, kind: .process(group.kind), type: group.rootType, count: group.instances,
      frames: group.cycleSteps)
  }

  /// The entry as a baseline file, a gate's JSON verdict and a JSON diff write it.
  public var json: JSONValue {
    .object([
      ("id", .string(id.hex)),
      ("kind", .string(kind.rawValue)),
      ("type", .string(type)),
      ("count", .int(count)),
      ("frames", .array(frames.map { .string($0) })),
    ])
  }

  /// The type and the innermost caller, as a finding's title reads.
  public var title: String {
    if case .process = kind {
      return frames.isEmpty ? type : "\(type) (cycle \(frames.joined(separator: " → ")))"
    }
    return Signature(type: type, frames: frames.prefix(1).map { Frame(ip: 0, symbol: $0) }).title
  }

  /// `digests` with one entry per id (counts added up, the first entry's other fields
  /// kept), most serious kind first, then by type and id: the order a baseline is written
  /// in, so that it changes only where findings do and reads well in review.
  ///
  /// Why add up: two findings share an id only when they differ in what the id leaves
  /// out (two call sites in one stripped module, see ``FindingID``); a baseline cannot tell
  /// them apart, so it allows their total.
  public static func combined(_ digests: [FindingDigest]) -> [FindingDigest] {
    var order: [FindingID] = []
    var byID: [FindingID: FindingDigest] = [:]
    for digest in digests {
      if byID[digest.id] == nil {
        order.append(digest.id)
        byID[digest.id] = digest
      } else {
        byID[digest.id]!.count += digest.count
      }
    }
    return order.map { byID[$0]! }.sorted {
      ($0.kind, $0.type, $0.id) < ($1.kind, $1.type, $1.id)
    }
  }
}
