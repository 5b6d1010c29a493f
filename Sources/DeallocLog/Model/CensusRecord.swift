/// `census`: every Swift object the program could no longer reach at one moment (a
/// checkpoint, or the exit), grouped as `leaks` groups them (docs/log-format.md).
///
/// What the reader keeps is capped (``CensusRecord/Limits``), so a huge or hostile record
/// cannot grow memory without bound; what it drops is counted.
public struct CensusRecord: Sendable, Equatable {
  public var time: Int64
  /// `"exit"`, or the checkpoint's label.
  public var label: String
  /// Why the census could not run; everything else is then empty.
  public var error: String?
  public var objects = 0
  public var bytes = 0
  /// Objects (and bytes) in the program's leak groups.
  public var leaked = 0
  public var leakedBytes = 0
  /// Objects (and bytes) in groups the census found to be the toolchain's own.
  public var libraryLeaked = 0
  public var libraryLeakedBytes = 0
  public var delayedObjects = 0
  /// The findings written in full, largest first: the program's, then the libraries'.
  public var groups: [CensusGroup] = []
  /// Findings beyond ``groups``: the record's `more`, plus groups this reader dropped.
  public var moreFindings = 0
  public var moreObjects = 0
  public var moreBytes = 0
  /// Whether the findings beyond ``groups`` are the libraries' (the record lists the
  /// program's first, so they are when its last listed one is a library's).
  public var unlistedAreLibrary = false
  /// Objects waiting in queues, per queue.
  public var delayed: [CensusQueue] = []
  /// Live objects per type, most numerous first.
  public var live: [CensusTypeCount] = []
  /// Types whose live count rose at every census of this label (the record's optional
  /// `growing`): one instance of each and what held it.
  public var growing: [CensusGrowingInstance] = []
  public var threadsStopped = 0
  public var threadsUnstopped = 0
  /// The census's own time, in microseconds.
  public var microseconds: Int?
  /// The record's optional `allocStacks`: written only with allocation stacks on.
  public var allocationStacks: AllocationStackCounts?

  public init(time: Int64, label: String) {
    self.time = time
    self.label = label
  }

  /// The program's leak groups (not the libraries').
  public var programGroups: [CensusGroup] { groups.filter { !$0.library } }
  /// The libraries' leak groups.
  public var libraryGroups: [CensusGroup] { groups.filter(\.library) }

  /// The most a reader keeps of one record.
  public enum Limits {
    public static let groups = 1_000
    public static let membersPerGroup = 64
    public static let edgesPerGroup = 64
    public static let treeLines = 256
    public static let types = 1_000
    public static let queues = 256
    public static let allocationFrames = 64
  }
}

/// How allocation stacks fared (the record's `allocStacks`): allocations given a stack,
/// those the recorder's full tables dropped (their objects have none), and live objects
/// with one at the census, and the sampling rate (`sampleEvery`: one allocation in this many
/// was recorded; 1, the default, records every one).
public struct AllocationStackCounts: Sendable, Equatable {
  public var recorded: Int
  public var dropped: Int
  public var objects: Int
  public var sampleEvery: Int

  public init(recorded: Int, dropped: Int, objects: Int, sampleEvery: Int = 1) {
    self.recorded = recorded
    self.dropped = dropped
    self.objects = objects
    self.sampleEvery = sampleEvery
  }
}

/// A type's objects and bytes.
public struct CensusTypeCount: Sendable, Equatable {
  public var type: String
  public var count: Int
  public var bytes: Int

  public init(type: String, count: Int, bytes: Int) {
    self.type = type
    self.count = count
    self.bytes = bytes
  }
}

/// One finding of a census: a ROOT CYCLE or ROOT LEAK group and the groups of its shape.
public struct CensusGroup: Sendable, Equatable {
  public enum Kind: String, Sendable {
    case cycle, leak
  }

  /// The finding id (12 hex digits): same shape of types and fields, same id.
  public var id: String
  public var kind: Kind
  /// Groups of this shape.
  public var instances: Int
  /// Objects and bytes of all its instances.
  public var count: Int
  public var bytes: Int
  /// Every named type is the toolchain's (Swift, Foundation, Dispatch, XCTest, ...).
  public var library: Bool
  public var members: [CensusTypeCount]
  /// The cycle through the root: each type and the field that leads to the next.
  public var edges: [CensusEdge]
  /// The first instance as `leaks` prints it, depth first.
  public var tree: [CensusTreeLine]
  /// Where the root was allocated, innermost frame first (the record's optional
  /// `allocStack`); empty when allocation stacks were off or the root has none.
  public var allocationStack: [Frame]
  /// One allocation in this many was given a stack (the record's `allocStacks.sampleEvery`);
  /// 1 when every one was, or allocation stacks were off.
  public var allocationSampleEvery = 1

  public init(
    id: String, kind: Kind, instances: Int, count: Int, bytes: Int, library: Bool,
    members: [CensusTypeCount], edges: [CensusEdge], tree: [CensusTreeLine],
    allocationStack: [Frame] = []
  ) {
    self.allocationStack = allocationStack
    self.id = id
    self.kind = kind
    self.instances = instances
    self.count = count
    self.bytes = bytes
    self.library = library
    self.members = members
    self.edges = edges
    self.tree = tree
  }

  /// `Shop.Order.payment → Shop.Payment.order → Shop.Order`; empty for a ROOT LEAK.
  public var cycleText: String {
    guard let first = edges.first else { return "" }
    return (cycleSteps + [first.type]).joined(separator: " → ")
  }

  /// The cycle's references as `Type.field` (`Type[2]` for an array element).
  public var cycleSteps: [String] {
    edges.map { edge in
      edge.field.hasPrefix("[") ? edge.type + edge.field : edge.type + "." + edge.field
    }
  }

  /// The root's type: what `type:GLOB` suppressions and baselines name.
  public var rootType: String { tree.first?.type ?? members.first?.type ?? "" }

  /// A finding id as the rule spells it everywhere (12 lower-case hex digits): the `L`
  /// prefix the first recorders wrote (`L3fa2c4e1b0d9`) is dropped, so that logs written
  /// by them match today's suppressions, baselines and `explain`.
  public static func canonicalID(_ text: String) -> String {
    guard text.utf8.count == 13, text.first == "L" || text.first == "l" else { return text }
    return String(text.dropFirst()).lowercased()
  }

  /// The id a log's group is known by: ``canonicalID(_:)`` of what the record says when that
  /// is 12 hex digits, else (a damaged or foreign log) 12 hex digits derived from the text
  /// (FNV-1a, 48 bits). Why derive one: a group must have an id a baseline and a suppression
  /// can name, or a run could never pass against its own baseline.
  public static func readableID(_ text: String) -> String {
    let canonical = canonicalID(text).lowercased()
    let isHex = canonical.utf8.allSatisfy {
      (0x30...0x39).contains($0) || (0x61...0x66).contains($0)
    }
    if canonical.utf8.count == 12, isHex { return canonical }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
      hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }
    let hex = String(hash & 0xffff_ffff_ffff, radix: 16)
    return String(repeating: "0", count: 12 - hex.count) + hex
  }
}

/// A reference in a cycle: the holder's type and its field (`"payment"`, `"[2]"`,
/// `"captured"`, `"+24"`).
public struct CensusEdge: Sendable, Equatable {
  public var type: String
  public var field: String

  public init(type: String, field: String) {
    self.type = type
    self.field = field
  }
}

/// One line of a group's tree.
public struct CensusTreeLine: Sendable, Equatable {
  public var depth: Int
  public var type: String
  public var object: Address?
  public var size: Int
  /// The parent's field that points here (nil for the root).
  public var via: String?
  /// A reference back into the cycle (`CYCLE BACK TO`).
  public var back: Bool
  /// This object and what it alone keeps (0 for a line back).
  public var count: Int
  public var bytes: Int

  public init(
    depth: Int, type: String, object: Address?, size: Int, via: String?, back: Bool,
    count: Int, bytes: Int
  ) {
    self.depth = depth
    self.type = type
    self.object = object
    self.size = size
    self.via = via
    self.back = back
    self.count = count
    self.bytes = bytes
  }
}

/// What one queue held at a census.
public struct CensusQueue: Sendable, Equatable {
  public var queue: String
  public var count: Int
  public var bytes: Int
  public var types: [CensusTypeCount]

  public init(queue: String, count: Int, bytes: Int, types: [CensusTypeCount]) {
    self.queue = queue
    self.count = count
    self.bytes = bytes
    self.types = types
  }
}

/// One instance of a type that grew at every census of a label, as the recorder picked it:
/// new since the previous census when it could tell, with its holder path.
public struct CensusGrowingInstance: Sendable, Equatable {
  public var type: String
  public var object: Address?
  /// Not there at the previous census of the label; false when its age is unknown.
  public var isNew: Bool
  /// What held it (a holder scan right after the census); nil when it had gone.
  public var holders: HolderReport?

  public init(type: String, object: Address?, isNew: Bool, holders: HolderReport?) {
    self.type = type
    self.object = object
    self.isNew = isNew
    self.holders = holders
  }
}
